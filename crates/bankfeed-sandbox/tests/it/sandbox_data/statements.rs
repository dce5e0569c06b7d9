//! GetStatements: real PDFs of the operation's accounts.

use super::*;

/// Checks that `pdf` is a whole PDF whose cross-reference table points at its objects; returns
/// its text.
fn check_pdf(pdf: &[u8]) -> String {
    assert!(pdf.starts_with(b"%PDF-"));
    assert!(pdf.ends_with(b"%%EOF"));
    let text = String::from_utf8_lossy(pdf).into_owned();
    let start: usize =
        text.rsplit("startxref").next().unwrap().trim().trim_end_matches("%%EOF").trim().parse().unwrap();
    let xref = std::str::from_utf8(&pdf[start..]).unwrap();
    let mut lines = xref.lines();
    assert_eq!(lines.next(), Some("xref"));
    let header: Vec<usize> = lines.next().unwrap().split(' ').map(|n| n.parse().unwrap()).collect();
    assert_eq!(header[0], 0);
    let table = &pdf[start + "xref\n".len() + lines_len(xref)..];
    for object in 0..header[1] {
        let entry = std::str::from_utf8(&table[object * 20..object * 20 + 20]).unwrap();
        let offset: usize = entry[..10].parse().unwrap();
        if object == 0 {
            assert!(entry.starts_with("0000000000 65535 f"));
            continue;
        }
        assert!(entry[10..].starts_with(" 00000 n"), "{entry:?}");
        assert!(pdf[offset..].starts_with(format!("{object} 0 obj").as_bytes()), "object {object} at {offset}");
    }
    assert!(text.contains("/Type /Catalog") && text.contains("/Type /Page "));
    text
}

/// The length of the subsection header line after `xref\n`, newline included.
fn lines_len(xref: &str) -> usize {
    xref["xref\n".len()..].find('\n').unwrap() + 1
}

#[tokio::test]
async fn statements_are_real_pdfs_of_the_operations_accounts_and_none_of_the_others() {
    let api = Api::with(config());
    let login = api.saved_login("Greatday").await;
    let detail = api.all_transactions(&login).await;
    let accounts = detail["Accounts"].as_array().unwrap();
    let operations: Vec<&Value> = accounts.iter().filter(|a| a["Category"] == "Operations").collect();
    assert!(operations.len() < accounts.len(), "a card at least is no operations account");
    for (option, months) in [(None, 1), (Some("MostRecent"), 1), (Some("Months3"), 3), (Some("Months12"), 12)] {
        let mut body = json!({"RequestId": login.request_id});
        if let Some(option) = option {
            body["NumberOfStatements"] = json!(option);
        }
        let (_, reply) = api.banking(STATEMENTS, body).await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        let by_account = reply.1["StatementsByAccount"].as_array().unwrap();
        // Every account, in the order of the detail, as the service lists them.
        let numbers = |list: &[Value], key: &str| list.iter().map(|item| item[key].clone()).collect::<Vec<_>>();
        assert_eq!(numbers(by_account, "AccountNumber"), numbers(accounts, "AccountNumber"));
        let mut unique = HashSet::new();
        for (statements, account) in by_account.iter().zip(accounts) {
            assert_eq!(statements["AccountNumber"], account["AccountNumber"]);
            let list = statements["Statements"].as_array().unwrap();
            if account["Category"] != "Operations" {
                assert!(list.is_empty(), "{account}: listed with no statements");
                continue;
            }
            assert_eq!(list.len(), months);
            for (index, statement) in list.iter().enumerate() {
                assert!(is_guid(&statement["UniqueId"]));
                assert!(unique.insert(statement["UniqueId"].clone()));
                assert_eq!(statement["FileType"], "PDF", "as the reference writes it");
                let unique_id = text(&statement["UniqueId"]);
                assert!(
                    unique_id.len() == 32 && unique_id.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
                    "UniqueId is 32 upper-case hex digits: {unique_id}"
                );
                let pdf = base64::engine::general_purpose::STANDARD.decode(text(&statement["Base64Bytes"])).unwrap();
                let content = check_pdf(&pdf);
                assert!(content.contains(text(&account["AccountNumber"])));
                if index == 0 {
                    assert!(content.contains("October 2026"), "the most recent month first");
                }
            }
        }
    }
    let chequing = operations[0]["Id"].clone();
    let (_, reply) =
        api.banking(STATEMENTS, json!({"RequestId": login.request_id, "AccountsFilter": [chequing]})).await;
    assert_eq!(reply.1["StatementsByAccount"].as_array().unwrap().len(), 1);
    let reply = api.post(STATEMENTS, json!({"RequestId": login.request_id, "NumberOfStatements": "Months6"})).await;
    assert_error(&reply, 401, "INVALID_REQUEST");
    assert_message_names(&reply, "NumberOfStatements");
}
