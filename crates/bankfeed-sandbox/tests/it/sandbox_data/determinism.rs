//! The same login has the same data in every sandbox; LoginIds come from the seed.

use super::*;

#[tokio::test]
async fn login_ids_come_from_the_seed_and_the_username() {
    let (first, second) = (Api::with(config()), Api::with(config()));
    let a = first.saved_login("greatday_nomfa").await;
    let b = second.saved_login("GreatDay_NoMFA").await;
    assert_eq!(a.login_id, b.login_id, "same seed, same user, same LoginId");
    assert!(uuid::Uuid::parse_str(&a.login_id).is_ok());
    assert_eq!(first.saved_login("greatday_nomfa").await.login_id, a.login_id);
    assert_ne!(first.saved_login("Greatday").await.login_id, a.login_id);
    let seeded = Api::with(SandboxConfig { seed: 7, ..config() });
    assert_ne!(seeded.saved_login("greatday_nomfa").await.login_id, a.login_id);
}

#[tokio::test]
async fn the_same_login_has_the_same_data_in_every_sandbox_and_users_differ() {
    let (first, second) = (Api::with(config()), Api::with(config()));
    let mut seen = HashSet::new();
    for username in ["greatday_nomfa", "Greatday", "mfa_multiple_choice"] {
        let (a, b) = (first.saved_login(username).await, second.saved_login(username).await);
        let (mut x, mut y) = (first.all_transactions(&a).await, second.all_transactions(&b).await);
        assert_ne!(x["RequestId"], y["RequestId"]);
        x["RequestId"] = Value::Null;
        y["RequestId"] = Value::Null;
        assert_eq!(x, y, "{username}: account detail");
        let (mut x_inv, mut y_inv) = (first.investments_of(&a).await, second.investments_of(&b).await);
        x_inv["RequestId"] = Value::Null;
        y_inv["RequestId"] = Value::Null;
        assert_eq!(x_inv, y_inv, "{username}: investments");
        for kind in ["GetAccountsSummary", "GetStatements"] {
            let op = format!("BankingServices/{kind}");
            let (_, mut p) = first.banking(&op, json!({"RequestId": a.request_id})).await;
            let (_, mut q) = second.banking(&op, json!({"RequestId": b.request_id})).await;
            p.1["RequestId"] = Value::Null;
            q.1["RequestId"] = Value::Null;
            assert_eq!(p, q, "{username}: {kind}");
        }
        assert!(seen.insert(x["Accounts"].to_string()), "{username}: own accounts");
        assert!(seen.insert(x_inv["Accounts"].to_string()), "{username}: own portfolio");
    }
    let seeded = Api::with(SandboxConfig { seed: 99, ..config() });
    let login = seeded.saved_login("greatday_nomfa").await;
    let other = seeded.all_transactions(&login).await;
    assert!(!seen.contains(&other["Accounts"].to_string()), "another seed, other data");
}
