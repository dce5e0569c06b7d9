//! Investments: every portfolio consistent.

use super::*;

/// Every rule of the investments payload; returns the number of trades.
pub(super) fn check_portfolio(body: &Value, login: &Login, username: &str) -> usize {
    assert_eq!(body["HttpStatusCode"], 200);
    assert_eq!(body["Institution"], json!({"Id": 14, "Name": "FlinksCapital"}));
    assert_eq!(body["Login"]["Type"], Value::Null);
    assert_eq!(body["Login"]["Id"], login.login_id.as_str());
    assert_eq!(body["Login"]["Username"], username);
    assert_eq!(body["RequestId"], login.request_id.as_str());

    let securities: HashMap<&str, &Value> =
        body["Securities"].as_array().unwrap().iter().map(|security| (text(&security["Id"]), security)).collect();
    for security in securities.values() {
        assert!(is_guid(&security["Id"]));
        assert_eq!(security["Type"], "equity");
        for field in ["Name", "Symbol", "Currency"] {
            assert!(!text(&security[field]).is_empty(), "{field}");
        }
        assert!(security["Aliases"].is_array());
        assert!(cents(&security["Price"]) > 0);
        let date = text(&security["Date"]);
        assert_eq!(date.len(), "2026-11-19T21:00:00.0000000Z".len(), "{date}");
        assert!(date.ends_with('Z') && date.split('.').nth(1).unwrap().len() == 8);
        assert!(date[..10] <= *AS_OF);
    }
    let all = securities.values();
    assert!(all.clone().any(|s| s.get("CUSIP").is_none()), "a CUSIP absent");
    assert!(all.clone().any(|s| s.get("ISIN") == Some(&Value::Null)), "an ISIN null");
    assert!(all.clone().any(|s| s.get("ISIN").is_none()), "an ISIN absent");
    assert!(all.clone().any(|s| s["ISIN"].is_string()), "an ISIN given");

    let accounts = body["Accounts"].as_array().unwrap();
    assert!((2..=4).contains(&accounts.len()), "{} accounts", accounts.len());
    let currencies: HashSet<&str> = accounts.iter().map(|a| text(&a["Currency"])).collect();
    assert_eq!(currencies, HashSet::from(["CAD", "USD"]));
    let (mut value, mut cash, mut trades) = (0, 0, 0);
    for account in accounts {
        assert!(is_guid(&account["Id"]));
        let kind = text(&account["Type"]);
        assert!(["cash", "margin", "tfsa", "rrsp"].contains(&kind), "{kind}");
        let registered = kind == "tfsa" || kind == "rrsp";
        assert_eq!(account["Registered"], registered);
        let currency = text(&account["Currency"]);
        let registration = if registered { "Registered" } else { "NonRegistered" };
        assert_eq!(
            text(&account["FullAccountId"]),
            format!("{registration}:{}-{kind}-{currency}", text(&account["AccountId"]))
        );
        assert!(!text(&account["Name"]).is_empty());

        // Positions are what the trades add up to.
        let mut net: HashMap<&str, i64> = HashMap::new();
        for trade in account["Transactions"].as_array().unwrap() {
            trades += 1;
            assert!(is_guid(&trade["Id"]));
            let security = securities[text(&trade["SecurityId"])];
            assert_eq!(security["Currency"], currency);
            let date = text(&trade["Date"]);
            assert!(date.len() == 10 && (OLDEST..=AS_OF).contains(&date), "{date}");
            let quantity = trade["Quantity"].as_f64().unwrap();
            let fee = cents(&trade["Fee"]);
            assert!(fee >= 0);
            // The trade price is in the description: "Bought 10 RY @ 131.25".
            let description = text(&trade["Description"]);
            let price = cents(&json!(description.rsplit("@ ").next().unwrap().parse::<f64>().unwrap()));
            let gross = (quantity.abs() as i64) * price;
            let amount = cents(&trade["Amount"]);
            match text(&trade["Type"]) {
                "buy" => {
                    assert!(quantity > 0.0 && amount < 0, "{trade}");
                    assert_eq!(amount, -gross - fee, "{trade}");
                }
                "sell" => {
                    assert!(quantity < 0.0 && amount > 0, "{trade}");
                    assert_eq!(amount, gross - fee, "{trade}");
                }
                other => panic!("trade type {other}"),
            }
            *net.entry(text(&trade["SecurityId"])).or_default() += quantity as i64;
        }
        let mut market_total = 0;
        let positions = account["Positions"].as_array().unwrap();
        for position in positions {
            assert!(is_guid(&position["Id"]));
            assert_eq!(position["Class"], "equity");
            let security = securities[text(&position["SecurityId"])];
            assert_eq!(position["Currency"], security["Currency"]);
            let quantity = position["Quantity"].as_f64().unwrap();
            assert_eq!(net[text(&position["SecurityId"])], quantity as i64);
            let market = cents(&position["MarketValue"]);
            assert_eq!(market, (quantity * security["Price"].as_f64().unwrap() * 100.0).round() as i64);
            let book = cents(&position["BookValue"]);
            assert_eq!(cents(&position["GainAmount"]), market - book);
            assert_eq!(position["GainCurrencyAmount"], position["GainAmount"]);
            let percent = position["GainPercent"].as_f64().unwrap();
            assert!((percent - (market - book) as f64 / book as f64).abs() < 1e-5);
            market_total += market;
        }
        let held = net.values().filter(|quantity| **quantity > 0).count();
        assert_eq!(positions.len(), held, "a position per security still held");
        assert_eq!(cents(&account["AccountValue"]), cents(&account["Cash"]) + market_total);
        assert_eq!(account["CurrencyValue"], account["AccountValue"]);
        value += cents(&account["AccountValue"]);
        cash += cents(&account["Cash"]);
    }
    assert_eq!(cents(&body["Value"]), value);
    assert_eq!(cents(&body["Cash"]), cash);
    trades
}

#[tokio::test]
async fn every_portfolio_is_consistent() {
    for seed in [0, 1] {
        let api = Api::with(SandboxConfig { seed, ..config() });
        for (username, login) in open_users(&api).await {
            let body = api.investments_of(&login).await;
            let trades = check_portfolio(&body, &login, &username);
            assert!((50..=70).contains(&trades), "about 60 trades, not {trades}");
            let kinds: HashSet<&str> = body["Accounts"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|a| a["Transactions"].as_array().unwrap())
                .map(|t| text(&t["Type"]))
                .collect();
            assert_eq!(kinds, HashSet::from(["buy", "sell"]), "{username}");
        }
    }
}
