//! Transaction counts, and a login with 100,000 of them.

use super::accounts::check_accounts;
use super::investments::check_portfolio;
use super::*;

fn banking_count(body: &Value) -> usize {
    body["Accounts"].as_array().unwrap().iter().map(|a| a["Transactions"].as_array().unwrap().len()).sum()
}

fn trade_count(body: &Value) -> usize {
    body["Accounts"].as_array().unwrap().iter().map(|a| a["Transactions"].as_array().unwrap().len()).sum()
}

#[tokio::test]
async fn transaction_counts_are_exact() {
    for count in [0usize, 1, 7, 100_000] {
        let api = Api::with(SandboxConfig {
            investment_transactions: Some(count),
            banking_transactions: Some(count),
            tier2: true,
            ..config()
        });
        // Timing is for benchmarks; this checks sizes and consistency only.
        let login = api.saved_login("greatday_nomfa").await;
        let banking = api.all_transactions(&login).await;
        let portfolio = api.investments_of(&login).await;
        assert_eq!(banking_count(&banking), count);
        check_accounts(&banking, 365);
        assert_eq!(trade_count(&portfolio), count);
        check_portfolio(&portfolio, &login, "greatday_nomfa");
        if count == 0 {
            for account in portfolio["Accounts"].as_array().unwrap() {
                assert_eq!(account["Positions"], json!([]));
                assert_eq!(account["AccountValue"], account["Cash"]);
            }
        }
        if count == 1 {
            let positions: usize = portfolio["Accounts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["Positions"].as_array().unwrap().len())
                .sum();
            assert_eq!(positions, 1, "one buy, one position");
        }
        // Attributes run over the same transactions.
        let reply =
            api.custom(&login, json!({"MostRecentCached": true, "Attributes": {"Card": ["count_transactions"]}})).await;
        assert_eq!(reply.1["Card"]["count_transactions"], count);
    }
}

#[tokio::test]
async fn with_100000_transactions_the_summary_answers_and_attributes_still_wait_for_detail() {
    // How fast is for benchmarks; this checks that a large login is served at all.
    let api = Api::with(SandboxConfig {
        investment_transactions: Some(100_000),
        banking_transactions: Some(100_000),
        tier2: true,
        ..config()
    });
    let login = api.saved_login("Greatday").await;
    let (_, reply) = api.banking(SUMMARY, json!({"RequestId": login.request_id})).await;
    assert_eq!(reply.0, 200);
    assert!(!reply.1["Accounts"].as_array().unwrap().is_empty());
    let reply =
        api.custom(&login, json!({"MostRecentCached": true, "Attributes": {"Card": ["count_transactions"]}})).await;
    assert_eq!(reply.0, 202, "before detail");
}
