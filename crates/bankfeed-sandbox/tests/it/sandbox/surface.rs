//! The public surface: the types, the users' list, the address, serve and stop.

use super::*;

#[test]
fn sandbox_is_send_and_sync_and_defaults_match_the_public_instance() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Sandbox>();
    let config = SandboxConfig::default();
    assert_eq!(config.customer_id, "43387ca6-0391-4c82-857d-70d95f087ecb");
    assert_eq!(config.host.to_string(), "127.0.0.1");
    assert_eq!((config.port, config.pending_polls, config.slow_pending_polls), (0, 1, 5));
    assert!(config.pending_seconds.abs() < f64::EPSILON);
    assert_eq!(config.session_ttl, Duration::from_secs(480));
    assert_eq!(config.token_ttl, Duration::from_secs(30 * 60));
    // The keys the public test instance publishes, on by default.
    assert!(config.auth);
    assert_eq!(config.secret_key.as_deref(), Some("c4569c54-e167-4d34-8de6-f4113bc82414"));
    assert_eq!(config.api_key.as_deref(), Some("3d5266a8-b697-48d4-8de6-52e2e2662acc"));
    assert_eq!(config.header_read_timeout, Duration::from_secs(10));
    assert_eq!(config.request_read_timeout, Duration::from_secs(30));
    assert_eq!(config.idle_timeout, Duration::from_secs(30));
    assert_eq!(config.max_connections, 1024);
}

#[test]
fn users_are_listed_documented_ones_first() {
    let names: Vec<&str> = users().iter().map(|user| user.username).collect();
    assert_eq!(
        names,
        [
            "Greatday",
            "greatday_nomfa",
            "test_disabled_account",
            "test_service_unavailable",
            "test_pending",
            "test_dispatched",
            "greatday_three_rounds",
            "mfa_three_questions",
            "mfa_image",
            "mfa_securid",
            "mfa_multiple_choice",
            "mfa_multiple_answers",
            "mfa_text_or_call",
            "mfa_trusted_device",
            "mfa_reset_questions",
        ]
    );
    for user in users().into_iter().filter(|user| user.username != "Greatday") {
        assert_eq!(user.password, "Everyday");
        assert!(!user.description.is_empty());
        assert_eq!(user.answers.len(), user.challenge_types.len(), "{}", user.username);
    }
    // Greatday is asked one of its three questions per login, and any of the three may come.
    assert_eq!(user("Greatday").challenge_types, ["QuestionAndAnswer"]);
    assert_eq!(user("Greatday").answers, user("greatday_three_rounds").answers);
    assert_eq!(user("greatday_three_rounds").challenge_types, ["QuestionAndAnswer"; 3]);
    assert_eq!(user("mfa_trusted_device").challenge_types, ["WaitUntilEUAccept"]);
    assert!(user("mfa_trusted_device").description.contains("MostRecentCached false"));
    assert_eq!(user("mfa_text_or_call").answers[0], ("(514) 555-0101".to_owned(), vec!["Text".to_owned()]));
    let reset = user("mfa_reset_questions");
    let questions: HashSet<&str> = reset.answers[2..].iter().map(|(_, answer)| answer[0].as_str()).collect();
    assert_eq!(questions.len(), 3, "the sample reset answers pick different questions");
    assert!(user("greatday_nomfa").challenge_types.is_empty());
}

#[tokio::test]
async fn url_addr_and_stop() {
    let api = Api::new();
    let url = api.sandbox.url();
    assert_eq!(url, format!("http://127.0.0.1:{}", api.sandbox.addr().port()));
    assert!(!url.ends_with('/'));
    assert_ne!(api.sandbox.addr().port(), 0);
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    let started = Instant::now();
    api.sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(3), "stop took {:?}", started.elapsed());
    let after = api.http.post(format!("{url}/v3/x/Investments")).send().await;
    assert!(after.is_err(), "the server still answers after stop");
}

#[tokio::test]
async fn serve_runs_on_a_given_listener_until_shutdown() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Without keys: the test is about serving, and writes its request by hand.
    let config = SandboxConfig { customer_id: "my-customer".into(), auth: false, ..SandboxConfig::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bankfeed_sandbox::serve(listener, config, async {
        let _ = stopped.await;
    }));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().unwrap();
    let reply = http
        .post(format!("http://{addr}/v3/my-customer/BankingServices/Authorize"))
        .header("content-type", "application/json")
        .body(r#"{"Institution":"FlinksCapital","Username":"greatday_nomfa","Password":"Everyday","MostRecentCached":false}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    drop(http);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
}
