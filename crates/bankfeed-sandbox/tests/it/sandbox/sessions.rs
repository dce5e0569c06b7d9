//! Sessions expire when idle.

use super::*;

#[tokio::test]
async fn idle_sessions_expire() {
    let api = Api::with(SandboxConfig {
        // Wide margins (a third of the time to live between two calls): a loaded CI machine
        // must not expire a session the test keeps active.
        session_ttl: Duration::from_millis(900),
        pending_polls: 0,
        ..SandboxConfig::default()
    });
    let challenged = api.credentials("Greatday", false).await;
    let open = api.login("greatday_nomfa", false).await;
    let open_id = open["RequestId"].as_str().unwrap().to_owned();
    // Activity keeps a session alive.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(api.investments(&login_id(&open), &open_id).await.0, 200);
    }
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let reply = api.answer(&request_id(&challenged), json!({"What city were you born in?": ["Montreal"]})).await;
    assert_error(&reply, 400, "SESSION_EXPIRED");
    assert_eq!(reply.1["RequestId"], request_id(&challenged).as_str());
    let reply = api.investments(&login_id(&open), &open_id).await;
    assert_error(&reply, 400, "SESSION_EXPIRED");
    assert_eq!(reply.1["RequestId"], open_id.as_str());
}
