//! Authorize on a saved connection: cached reads, live logins, trusted devices.

use super::*;

#[tokio::test]
async fn cached_reads_need_a_saved_connection() {
    let api = Api::new();
    let unsaved = api.login("Greatday", false).await;
    let login = login_id(&unsaved);
    assert_error(&api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await, 401, "INVALID_LOGIN");

    let saved = api.login("Greatday", true).await;
    assert_eq!(login_id(&saved), login, "same user, same LoginId");
    let cached = api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await;
    assert_eq!(cached.0, 200);
    assert_eq!(cached.1["Login"]["Id"], login.as_str());
    assert_eq!(cached.1["Login"]["Username"], "Greatday");
    assert_ne!(request_id(&cached), saved["RequestId"].as_str().unwrap());
    // LoginIds are GUIDs: the case they come in does not matter.
    let upper = api.authorize(json!({"LoginId": login.to_uppercase(), "MostRecentCached": true})).await;
    assert_eq!(upper.0, 200);
    // A later unsaved login does not forget the saved connection.
    api.login("Greatday", false).await;
    assert_eq!(api.authorize(json!({"LoginId": login, "MostRecentCached": true})).await.0, 200);

    let unknown = uuid::Uuid::new_v4().to_string();
    assert_error(&api.authorize(json!({"LoginId": unknown, "MostRecentCached": true})).await, 401, "INVALID_LOGIN");
    assert_error(&api.authorize(json!({"LoginId": unknown, "MostRecentCached": false})).await, 401, "INVALID_LOGIN");
}

#[tokio::test]
async fn live_login_by_saved_connection_runs_the_users_own_flow() {
    let api = Api::new();
    let saved = api.login("Greatday", true).await;
    let login = login_id(&saved);
    let live = api.authorize(json!({"LoginId": login, "MostRecentCached": false, "Save": true})).await;
    assert_eq!(live.0, 203);
    assert_eq!(prompts(&live.1), ["What city were you born in?"]);
    let done = api.complete("Greatday", live).await;
    assert_eq!(login_id(&done), login);

    let nomfa = api.login("greatday_nomfa", true).await;
    let live = api.authorize(json!({"LoginId": login_id(&nomfa), "MostRecentCached": false})).await;
    assert_eq!(live.0, 200);
    assert_eq!(login_id(&live.1), login_id(&nomfa));
}

#[tokio::test]
async fn trusted_device_confirms_on_the_saved_connection_call() {
    let api = Api::new();
    let first = api.credentials("mfa_trusted_device", true).await;
    assert_eq!(first.0, 200, "no challenge with credentials");
    let login = login_id(&first.1);
    let live = api.authorize(json!({"LoginId": login, "MostRecentCached": false})).await;
    assert_eq!(live.0, 203);
    let id = request_id(&live);
    assert_eq!(
        live.1["SecurityChallenges"],
        json!([{"Type": "WaitUntilEUAccept", "Prompt": "Confirm this sign-in on your trusted device, then continue"}])
    );
    let prompt = "Confirm this sign-in on your trusted device, then continue";
    assert_error(&api.answer(&id, json!({prompt: ["NOT YET"]})).await, 401, "INVALID_SECURITY_RESPONSE");
    let done = api.answer(&id, json!({prompt: ["VERIFIED"]})).await;
    assert_eq!(done.0, 200);
    assert_eq!(login_id(&done.1), login);
    assert_eq!(request_id(&done), id);
}
