//! wasm-bindgen tests: the real `fetchTile` export, real `fetch` and timers, against the loopback
//! fault server whose URL is baked in at build time (TILEFETCH_TEST_SERVER). The same bodies run
//! in Node, headless Chromium and a dedicated worker (scripts/test.sh selects the mode).
#![cfg(target_arch = "wasm32")]

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

use tilefetch::web::TileClient;

/// Each test on a client of its own: the three runtimes share one fault server, and what calls
/// to a host share (a pause, the breaker) must not leak from one test into another.
async fn fetch_tile(url: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let client = TileClient::new(JsValue::UNDEFINED)?;
    wasm_bindgen_futures::JsFuture::from(client.fetch_tile(url, options)).await
}

fn server() -> &'static str {
    match option_env!("TILEFETCH_TEST_SERVER") {
        Some(url) => url,
        None => {
            panic!("build with TILEFETCH_TEST_SERVER=http://127.0.0.1:PORT (scripts/test.sh does)")
        }
    }
}

/// A tile URL in its own counter namespace, so the three modes never share state on the server.
fn tile(query: &str) -> String {
    let run = (js_sys::Math::random() * 1e12) as u64;
    format!("{}/tile/3/2/1.png?run=wasm{run}&{query}", server())
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &JsValue::from_str(key)).unwrap()
}

fn options(pairs: &[(&str, JsValue)]) -> JsValue {
    let object = js_sys::Object::new();
    for (key, value) in pairs {
        Reflect::set(&object, &JsValue::from_str(key), value).unwrap();
    }
    object.into()
}

fn fast() -> Vec<(&'static str, JsValue)> {
    vec![("baseDelayMs", 10.into()), ("maxDelayMs", 40.into())]
}

async fn expect_error(url: JsValue, opts: JsValue) -> JsValue {
    match fetch_tile(url, opts).await {
        Ok(tile) => panic!("expected a TileError, got a tile with status {:?}", get(&tile, "status")),
        Err(error) => {
            assert!(error.is_instance_of::<js_sys::Error>(), "a real Error");
            assert_eq!(get(&error, "name"), "TileError");
            error
        }
    }
}

fn now() -> f64 {
    js_sys::Date::now()
}

#[wasm_bindgen_test]
async fn a_healthy_tile_is_delivered_whole() {
    let tile = fetch_tile(tile("").into(), JsValue::UNDEFINED).await.unwrap();
    let data: js_sys::Uint8Array = get(&tile, "data").dyn_into().unwrap();
    let bytes = data.to_vec();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.ends_with(b"IEND\xaeB`\x82"));
    assert_eq!(get(&tile, "status"), 200);
    assert_eq!(get(&tile, "contentType"), "image/png");
    assert_eq!(get(&tile, "attempts"), 1);
    assert_eq!(get(&tile, "empty"), false);
    assert!(get(&tile, "headers").is_instance_of::<web_sys::Headers>());
}

#[wasm_bindgen_test]
async fn transient_503s_are_retried() {
    let tile = fetch_tile(tile("f=503&n=2").into(), options(&fast())).await.unwrap();
    assert_eq!(get(&tile, "attempts"), 3);
}

#[wasm_bindgen_test]
async fn a_service_exception_served_with_200_is_never_a_tile() {
    let tile = fetch_tile(tile("f=sexml&n=1").into(), options(&fast())).await.unwrap();
    assert_eq!(get(&tile, "attempts"), 2);
    assert_eq!(get(&tile, "contentType"), "image/png");
}

#[wasm_bindgen_test]
async fn html_error_pages_are_retried() {
    let tile = fetch_tile(tile("f=html&n=1").into(), options(&fast())).await.unwrap();
    assert_eq!(get(&tile, "attempts"), 2);
}

#[wasm_bindgen_test]
async fn a_404_is_permanent() {
    let error = expect_error(tile("f=404").into(), options(&fast())).await;
    assert_eq!(get(&error, "kind"), "http");
    assert_eq!(get(&error, "status"), 404);
    assert_eq!(get(&error, "attempts"), 1);
}

#[wasm_bindgen_test]
async fn retry_after_is_a_floor() {
    let started = now();
    let tile = fetch_tile(tile("f=429&n=1&ra=1").into(), options(&fast())).await.unwrap();
    assert_eq!(get(&tile, "attempts"), 2);
    assert!(now() - started >= 990.0, "waited {} ms", now() - started);
}

#[wasm_bindgen_test]
async fn a_hanging_server_ends_at_the_deadline() {
    let started = now();
    let opts = options(&[("attemptTimeoutMs", 200.into()), ("deadlineMs", 500.into())]);
    let error = expect_error(tile("f=hang").into(), opts).await;
    let took = now() - started;
    assert_eq!(get(&error, "kind"), "deadline");
    assert_eq!(get(&get(&error, "cause"), "kind"), "timeout");
    // It may end before 500 ms: a sleep that would cross the deadline is never started.
    assert!((200.0..600.0).contains(&took), "took {took} ms");
}

#[wasm_bindgen_test]
async fn abort_during_backoff_rejects_at_once() {
    let controller = web_sys::AbortController::new().unwrap();
    let signal = controller.signal();
    let on_retry = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
        // Abort from inside the observer: the sleep that follows must not run.
        controller.abort();
    });
    let opts = options(&[
        ("baseDelayMs", 5000.into()),
        ("jitter", "none".into()),
        ("signal", signal.into()),
        ("onRetry", on_retry.as_ref().clone()),
    ]);
    let started = now();
    let error = expect_error(tile("f=503").into(), opts).await;
    assert_eq!(get(&error, "kind"), "aborted");
    assert!(now() - started < 1000.0, "took {} ms", now() - started);
}

#[wasm_bindgen_test]
async fn bad_input_is_rejected_and_the_module_survives() {
    let cases: Vec<(JsValue, JsValue, &str)> = vec![
        (tile("").into(), options(&[("deadlinems", 1.into())]), "deadlinems"),
        (tile("").into(), options(&[("deadlineMs", f64::NAN.into())]), "deadlineMs"),
        (tile("").into(), options(&[("retryOn", js_sys::Array::of1(&99.into()).into())]), "retryOn"),
        (tile("").into(), 5.into(), "options"),
        ("ftp://127.0.0.1/1.png".into(), JsValue::UNDEFINED, "url"),
        (42.into(), JsValue::UNDEFINED, "url"),
    ];
    for (url, opts, field) in cases {
        let error = expect_error(url, opts).await;
        assert_eq!(get(&error, "kind"), "invalid-options");
        let message = get(&error, "message").as_string().unwrap();
        assert!(message.contains(field), "{message} should name {field}");
    }
    let tile = fetch_tile(tile("").into(), JsValue::UNDEFINED).await.unwrap();
    assert_eq!(get(&tile, "status"), 200);
}

/// The module's allocator (src/web/heap.rs): blocks of every size keep what was written to them
/// while other blocks come and go, blocks that grow keep their contents, and a repeated workload
/// reuses freed blocks instead of growing memory.
#[wasm_bindgen_test]
fn the_allocator_keeps_blocks_apart_and_reuses_them() {
    let sizes = [1usize, 15, 16, 17, 100, 4095, 4096, 5000, 70_000, 300_000];
    let round = || {
        let mut held: Vec<Vec<u8>> = Vec::new();
        for (i, size) in sizes.iter().cycle().take(200).enumerate() {
            held.push(vec![(i % 251) as u8; *size]);
            if i % 3 == 0 {
                // Free some while others are live, so freed blocks are handed out again.
                held.swap_remove(i / 2);
            }
        }
        for (i, block) in held.iter_mut().enumerate() {
            let fill = block[0];
            block.extend(std::iter::repeat_n(fill, i * 37));
        }
        for block in &held {
            assert!(block.iter().all(|b| *b == block[0]), "a block was overwritten");
        }
    };
    round();
    let before = core::arch::wasm32::memory_size::<0>();
    for _ in 0..20 {
        round();
    }
    assert_eq!(core::arch::wasm32::memory_size::<0>(), before, "memory grew under a repeated workload");
}
