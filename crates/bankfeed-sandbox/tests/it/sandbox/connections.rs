//! Connections: timeouts and limits (docs/sandbox.md#limits), seen on raw blocking sockets, so
//! each test sees exactly what the server does on the wire.

use super::*;

/// A sandbox with short connection limits, so each test takes a second or two; without keys,
/// since these tests are about connections and write their requests by hand.
fn limited(header_read_timeout: Duration, idle_timeout: Duration, max_connections: usize) -> Sandbox {
    Sandbox::start(SandboxConfig {
        header_read_timeout,
        idle_timeout,
        max_connections,
        auth: false,
        ..SandboxConfig::default()
    })
    .unwrap()
}

fn connect(sandbox: &Sandbox) -> std::net::TcpStream {
    let stream = std::net::TcpStream::connect(sandbox.addr()).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// A keep-alive Authorize of `greatday_nomfa`, which answers 200 at once.
fn nomfa_request(sandbox: &Sandbox) -> String {
    let body =
        r#"{"Institution":"FlinksCapital","Username":"greatday_nomfa","Password":"Everyday","MostRecentCached":false}"#;
    format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        sandbox.customer_id(),
        sandbox.addr(),
        body.len()
    )
}

/// Reads one answer (head and a Content-Length body) and returns its status and body.
fn read_answer(stream: &mut std::net::TcpStream) -> (u16, String) {
    use std::io::Read;
    // Byte-exact: the head a byte at a time, then exactly its body, so that an answer that came
    // in the same segment (to a pipelined request) is left on the stream for the next call.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).expect("an answer");
        assert!(n > 0, "closed before an answer: {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
        .unwrap_or_else(|| panic!("no Content-Length in {head:?}"));
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).expect("the whole body");
    (status, String::from_utf8_lossy(&body).to_string())
}

/// Waits for the server to close `stream` (end of stream or a reset), returning how long it
/// took; fails if it is still open after `limit`. Any bytes the server sends first are returned.
fn wait_closed(stream: &mut std::net::TcpStream, limit: Duration) -> (Duration, Vec<u8>) {
    use std::io::Read;
    let started = Instant::now();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => return (started.elapsed(), received),
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                panic!("still open after {:?}; received {:?}", started.elapsed(), String::from_utf8_lossy(&received))
            }
            Err(_) => return (started.elapsed(), received),
        }
        assert!(started.elapsed() < limit, "still open after {limit:?}");
    }
}

#[test]
fn a_slowloris_is_closed_within_the_header_read_timeout() {
    use std::io::{Read, Write};
    let sandbox = limited(Duration::from_millis(600), Duration::from_secs(20), 16);
    let mut stream = connect(&sandbox);
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let request = nomfa_request(&sandbox);
    let started = Instant::now();
    // One byte every 100 ms: each byte is progress, and still the head is never complete.
    let closed = request.as_bytes().iter().take(200).find_map(|byte| {
        if stream.write_all(&[*byte]).is_err() {
            return Some(started.elapsed());
        }
        match stream.read(&mut [0u8; 64]) {
            Ok(_) => Some(started.elapsed()),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => None,
            Err(_) => Some(started.elapsed()),
        }
    });
    let closed = closed.expect("the slow connection stayed open");
    assert!(closed >= Duration::from_millis(500), "closed too early, after {closed:?}");
    assert!(closed < Duration::from_millis(1500), "closed after {closed:?}");
    // The timer counts from the head's first byte, also on a connection that has served one.
    let mut stream = connect(&sandbox);
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    stream.write_all(b"POST /v3/").unwrap();
    let (after, _) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after < Duration::from_millis(1500), "closed after {after:?}");
    assert_eq!(sandbox.request_count(), 1);
}

#[test]
fn a_connection_that_sends_nothing_is_closed_after_the_header_read_timeout() {
    let sandbox = limited(Duration::from_millis(500), Duration::from_secs(20), 16);
    let mut stream = connect(&sandbox);
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after >= Duration::from_millis(400) && after < Duration::from_millis(1500), "closed after {after:?}");
    assert!(received.is_empty());
}

#[test]
fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_millis(700), 16);
    let mut stream = connect(&sandbox);
    let request = nomfa_request(&sandbox);
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    // Reused within the idle timeout, the connection serves again.
    std::thread::sleep(Duration::from_millis(300));
    stream.write_all(request.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(after >= Duration::from_millis(600) && after < Duration::from_millis(1700), "closed after {after:?}");
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 2);
}

#[test]
fn a_body_announced_and_not_sent_ends_within_the_idle_timeout() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_millis(500), 16);
    let mut stream = connect(&sandbox);
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        sandbox.customer_id()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let started = Instant::now();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(3));
    assert!(started.elapsed() < Duration::from_millis(1700), "took {:?}", started.elapsed());
    // A JSON 408 that says the connection closes: the rest of the body is not waited for.
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 408, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 408, "{body}");
    assert_eq!(body["FlinksCode"], "REQUEST_TIMEOUT", "{body}");
    assert_eq!(body["Message"], "The request body stopped arriving for 0.5 s", "{body}");
}

/// The status, head and JSON body of an answer read whole by [`wait_closed`].
fn answer_of(received: &[u8]) -> (u16, String, Value) {
    let received = String::from_utf8_lossy(received);
    let (head, body) = received.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {received:?}"));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = serde_json::from_str(body).unwrap_or_else(|error| panic!("{error}: {body:?}"));
    (status, head.to_owned(), body)
}

/// A sandbox whose requests must arrive whole within `request_read_timeout`; its other
/// timeouts are long enough to play no part. Without keys, as [`limited`].
fn bounded(request_read_timeout: Duration, max_connections: usize) -> Sandbox {
    Sandbox::start(SandboxConfig {
        auth: false,
        request_read_timeout,
        header_read_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
        max_connections,
        ..SandboxConfig::default()
    })
    .unwrap()
}

/// The head of an Authorize whose body of `length` bytes is still to come.
fn upload_head(sandbox: &Sandbox, length: usize) -> String {
    format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
        sandbox.customer_id()
    )
}

/// Sends `bytes` one at a time, every `pace`, until the server answers or closes: then returns
/// how long that took, counted from `started`, and all it sent. None when `stop` is set first.
fn dribble(
    stream: &mut std::net::TcpStream,
    bytes: &[u8],
    pace: Duration,
    started: Instant,
    stop: &std::sync::atomic::AtomicBool,
) -> Option<(Duration, Vec<u8>)> {
    use std::io::{Read, Write};
    stream.set_read_timeout(Some(pace)).unwrap();
    for byte in bytes {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        let written = stream.write_all(&[*byte]);
        let mut chunk = [0u8; 1024];
        match stream.read(&mut chunk) {
            Ok(0) => return Some((started.elapsed(), Vec::new())),
            Ok(n) => {
                let after = started.elapsed();
                let (_, rest) = wait_closed(stream, Duration::from_secs(3));
                return Some((after, [&chunk[..n], &rest[..]].concat()));
            }
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                assert!(written.is_ok(), "the server closed without a word: {written:?}");
            }
            Err(_) => return Some((started.elapsed(), Vec::new())),
        }
    }
    panic!("no answer after {} bytes", bytes.len())
}

#[test]
fn a_body_sent_a_byte_at_a_time_gets_a_408_within_the_request_read_timeout() {
    use std::io::Write;
    let sandbox = bounded(Duration::from_secs(1), 16);
    let mut stream = connect(&sandbox);
    let started = Instant::now();
    stream.write_all(upload_head(&sandbox, 10_000).as_bytes()).unwrap();
    // A byte every 100 ms: each one is progress, so the idle timeout (20 s) would never end it.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (after, received) =
        dribble(&mut stream, &[b' '; 200], Duration::from_millis(100), started, &stop).expect("an answer");
    assert!(after >= Duration::from_millis(900) && after < Duration::from_secs(3), "answered after {after:?}");
    // The service's error envelope, and the connection closes: the rest is not waited for.
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 408, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 408, "{body}");
    assert_eq!(body["FlinksCode"], "REQUEST_TIMEOUT", "{body}");
    assert_eq!(body["Message"], "The request was not received whole within 1 s of its first byte", "{body}");
    assert_eq!(sandbox.requests().last().map(|request| request.status), Some(408));
    // A request sent whole is served as before.
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
}

#[test]
fn a_head_sent_a_byte_at_a_time_is_cut_within_the_request_read_timeout() {
    // The header-read timeout is 20 s here: the bound of the whole request cuts the head first.
    let sandbox = bounded(Duration::from_secs(1), 16);
    let mut stream = connect(&sandbox);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let request = nomfa_request(&sandbox);
    let (after, received) =
        dribble(&mut stream, request.as_bytes(), Duration::from_millis(100), Instant::now(), &stop).expect("a close");
    assert!(after >= Duration::from_millis(900) && after < Duration::from_secs(3), "closed after {after:?}");
    // No request was read, so there is none to answer, as for the header-read timeout.
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 0);
}

#[test]
fn with_every_connection_held_by_slow_uploads_a_normal_request_is_answered_at_once() {
    use std::io::Write;
    // The uploads would hold their places for 20 s, and each byte restarts their idle timeout.
    let sandbox = bounded(Duration::from_secs(20), 4);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let uploads: Vec<_> = (0..4)
        .map(|_| {
            let mut stream = connect(&sandbox);
            stream.write_all(upload_head(&sandbox, 10_000).as_bytes()).unwrap();
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                dribble(&mut stream, &[b' '; 10_000], Duration::from_millis(200), Instant::now(), &stop)
            })
        })
        .collect();
    // Every place taken, for longer than the second a connection has to send its request.
    std::thread::sleep(Duration::from_millis(1_500));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(3), "answered after {waited:?}");
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    // One upload gave its place up, and was told why; the others were left alone.
    let cut: Vec<_> = uploads.into_iter().filter_map(|upload| upload.join().unwrap()).collect();
    assert_eq!(cut.len(), 1, "{cut:?}");
    let (status, _, body) = answer_of(&cut[0].1);
    assert_eq!((status, &body["FlinksCode"]), (408, &json!("REQUEST_TIMEOUT")), "{body}");
    assert!(body["Message"].as_str().unwrap().contains("every connection"), "{body}");
}

#[test]
fn past_max_connections_a_newcomer_takes_the_place_of_the_longest_idle_connection() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 4);
    let mut idle: Vec<_> = (0..4).map(|_| connect(&sandbox)).collect();
    std::thread::sleep(Duration::from_millis(1_200));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() < Duration::from_secs(3), "answered after {:?}", started.elapsed());
    // The oldest gave its place up, closed without a word: it had sent no request.
    let (_, received) = wait_closed(&mut idle[0], Duration::from_secs(1));
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
}

#[test]
fn stop_does_not_wait_for_a_place_to_free() {
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 1);
    let _holder = connect(&sandbox);
    // Accepted, and waiting for the one place: its holder is within its second of grace.
    let mut waiting = connect(&sandbox);
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(2), "stop took {:?}", started.elapsed());
    let (_, received) = wait_closed(&mut waiting, Duration::from_secs(1));
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
}

#[test]
fn a_request_being_answered_keeps_its_place() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 2);
    let slow = Fault {
        operation: Some("Authorize".into()),
        times: Some(2),
        ..Fault::new(FaultKind::Latency { seconds: 2.5 })
    };
    sandbox.inject([slow]);
    // Both places held by requests that take 2.5 s to answer: neither may be cut.
    let answering: Vec<_> = (0..2)
        .map(|_| {
            let mut stream = connect(&sandbox);
            stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1_500));
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() >= Duration::from_millis(800), "answered after {:?}", started.elapsed());
    for mut stream in answering {
        assert_eq!(read_answer(&mut stream).0, 200);
    }
}

/// Found by the fuzzing: the 404 of an unknown route answered before its body had arrived, and
/// the sandbox closed the connection without `Connection: close`, so the next request on it failed.
#[test]
fn a_request_after_an_unknown_route_with_a_body_is_served_on_the_same_connection() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let body = format!(r#"{{"RequestId":"{}"}}"#, "x".repeat(256 * 1024));
    let head = format!(
        "POST /v3/{}/BankingServices/NoSuchOperation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        sandbox.customer_id(),
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The head alone first, so the answer is ready before the body arrives.
    std::thread::sleep(Duration::from_millis(100));
    // The next request pipelined behind the body, before the answer is read.
    stream.write_all(body.as_bytes()).unwrap();
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 404, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert!(answer["Message"].as_str().unwrap().contains("NoSuchOperation"), "{answer}");
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(sandbox.request_count(), 2);
}

/// A body past the 2 MiB limit gets the JSON error envelope, not axum's plain-text 413, and the
/// connection carries the next request.
#[test]
fn a_body_over_the_limit_gets_a_json_413_and_the_connection_goes_on() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let body = format!(r#"{{"Username":"{}"}}"#, "x".repeat(3 * 1024 * 1024));
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        sandbox.customer_id(),
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    // The next request pipelined behind the body, before the answer is read.
    stream.write_all(body.as_bytes()).unwrap();
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 413, "{answer}");
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["HttpStatusCode"], 413, "{answer}");
    assert_eq!(answer["FlinksCode"], "INVALID_REQUEST", "{answer}");
    assert!(answer["Message"].as_str().unwrap().contains("limit"), "{answer}");
    let (status, answer) = read_answer(&mut stream);
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn a_pooled_client_carries_on_after_the_server_closes_its_idle_connection() {
    // Without keys: the token calls would be requests of their own.
    let config = SandboxConfig { idle_timeout: Duration::from_millis(300), auth: false, ..SandboxConfig::default() };
    let api = Api::with(config);
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The pooled connection is gone; the client notices and opens another.
    assert_eq!(api.credentials("greatday_nomfa", false).await.0, 200);
    assert_eq!(api.sandbox.request_count(), 2);
}

#[test]
fn an_http2_preface_or_garbage_gets_an_error_or_a_close_at_once() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let inputs: [&[u8]; 4] = [
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"PRI * HTTP/2.0\r\n\r\n",
        // The start of a TLS ClientHello.
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        b"\x00\x01\x02\x03\r\n\r\n",
    ];
    for input in &inputs[1..] {
        let mut stream = connect(&sandbox);
        stream.write_all(input).unwrap();
        let (after, received) = wait_closed(&mut stream, Duration::from_secs(2));
        assert!(after < Duration::from_secs(1), "{input:?}: closed after {after:?}");
        let answer = String::from_utf8_lossy(&received);
        assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 400"), "{answer}");
    }
    // An HTTP/2 client is told to use HTTP/1.1 (an empty SETTINGS, then GOAWAY with
    // HTTP_1_1_REQUIRED); an HTTP/1 parser that meets the start of the preface gets 400.
    let mut stream = connect(&sandbox);
    stream.write_all(inputs[0]).unwrap();
    let refusal: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xd];
    let (after, received) = wait_closed(&mut stream, Duration::from_secs(2));
    assert!(after < Duration::from_secs(1), "closed after {after:?}");
    assert_eq!(received, refusal);
    let mut stream = connect(&sandbox);
    stream.write_all(inputs[1]).unwrap();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(1));
    assert!(String::from_utf8_lossy(&received).starts_with("HTTP/1.1 400"), "{:?}", String::from_utf8_lossy(&received));
    assert_eq!(sandbox.request_count(), 0);
}

#[tokio::test]
async fn an_http2_client_is_told_to_use_http1() {
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().http2_prior_knowledge().build().unwrap();
    let started = Instant::now();
    let error = http.get(format!("{}/v3/x", sandbox.url())).send().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |error| error.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ");
    assert!(chain.contains("HTTP/1.1"), "{chain}");
}

#[test]
fn hundreds_of_idle_connections_do_not_stop_a_real_request() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 1024);
    let idle: Vec<_> = (0..300).map(|_| connect(&sandbox)).collect();
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
    drop(idle);
}

#[test]
fn past_max_connections_a_request_waits_until_idle_ones_time_out() {
    use std::io::Write;
    let sandbox = limited(Duration::from_millis(500), Duration::from_secs(30), 4);
    let idle: Vec<_> = (0..8).map(|_| connect(&sandbox)).collect();
    let started = Instant::now();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    // The first four are accepted and time out after 500 ms, the next four after 1 s; then ours.
    assert_eq!(read_answer(&mut stream).0, 200);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(4), "answered after {waited:?}");
    drop(idle);
}

#[test]
fn a_limit_of_zero_connections_still_serves_one_at_a_time() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 0);
    for _ in 0..2 {
        let mut stream = connect(&sandbox);
        stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
        assert_eq!(read_answer(&mut stream).0, 200);
    }
}

#[test]
fn stop_does_not_wait_for_idle_connections() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let _idle: Vec<_> = (0..10).map(|_| connect(&sandbox)).collect();
    let mut stream = connect(&sandbox);
    stream.write_all(nomfa_request(&sandbox).as_bytes()).unwrap();
    assert_eq!(read_answer(&mut stream).0, 200);
    let started = Instant::now();
    sandbox.stop();
    assert!(started.elapsed() < Duration::from_secs(1), "stop took {:?}", started.elapsed());
    let (after, _) = wait_closed(&mut stream, Duration::from_secs(1));
    assert!(after < Duration::from_secs(1));
}

/// A body whose framing breaks (a chunk size that is not hex) cannot be read: the refusal is the
/// JSON error envelope made by the body extractor, not axum's plain-text 400, and says the
/// connection closes, since the rest of the stream cannot be told from a next request.
#[test]
fn a_body_that_cannot_be_read_gets_a_json_400() {
    use std::io::Write;
    let sandbox = limited(Duration::from_secs(10), Duration::from_secs(30), 16);
    let mut stream = connect(&sandbox);
    let head = format!(
        "POST /v3/{}/{AUTHORIZE} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{{}}\r\nzz\r\n",
        sandbox.customer_id()
    );
    stream.write_all(head.as_bytes()).unwrap();
    let (_, received) = wait_closed(&mut stream, Duration::from_secs(3));
    let (status, head, body) = answer_of(&received);
    assert_eq!(status, 400, "{head}");
    assert!(head.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{head}");
    assert_eq!(body["HttpStatusCode"], 400, "{body}");
    assert_eq!(body["FlinksCode"], "INVALID_REQUEST", "{body}");
    assert!(body["Message"].as_str().unwrap().starts_with("Failed to buffer the request body"), "{body}");
}
