//! DeleteCard.

use super::*;

#[tokio::test]
async fn delete_card_forgets_the_connection_and_a_new_one_gets_a_new_login_id() {
    // Deleted right after the login: CARD_IN_USE is sandbox_recorded.rs's subject.
    let api = Api::with(SandboxConfig { card_in_use: std::time::Duration::ZERO, ..config() });
    let unknown =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", uuid::Uuid::new_v4()), None).await;
    assert_error(&unknown, 401, "INVALID_LOGIN");

    let login = api.saved_login("greatday_nomfa").await;
    let before = api.all_transactions(&login).await;
    let reply =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", login.login_id), None).await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    assert_eq!(
        reply.1,
        json!({"HttpStatusCode": 200, "Message": format!("All of the information about LoginId {} has been removed", login.login_id)})
    );
    assert_error(&api.cached(&login.login_id).await, 401, "INVALID_LOGIN");
    let gone = api.post(DETAIL, json!({"RequestId": login.request_id})).await;
    assert_error(&gone, 400, "SESSION_NONEXISTENT");
    let again =
        api.send(reqwest::Method::DELETE, &format!("BankingServices/DeleteCard/{}", login.login_id), None).await;
    assert_error(&again, 401, "INVALID_LOGIN");

    // Connecting again is a new connection, with a LoginId of its own, as on the service
    // (docs/sandbox.md#lastrefresh-loginids-and-languages); the deleted one stays unknown.
    let back = api.saved_login("greatday_nomfa").await;
    assert_ne!(back.login_id, login.login_id, "a new LoginId");
    assert_eq!(api.cached(&back.login_id).await.0, 200);
    assert_error(&api.cached(&login.login_id).await, 401, "INVALID_LOGIN");
    let after = api.all_transactions(&back).await;
    assert_eq!(after["Login"]["Id"], json!(back.login_id));
    assert_ne!(before["Login"]["Id"], after["Login"]["Id"]);
}
