//! When the upstream finished serving a request, on real loopback sockets: a record's
//! `done_ms` (the last byte of its answer, or the moment serving stopped short) and `whole`
//! (its whole answer went out). Tolerances are generous: these run on a busy box.

use std::sync::Arc;
use std::time::Duration;

use rehearse::upstream::{MemoryRecords, UpstreamRecord};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::upstream::{TestUpstream, chat_body, raw, start};

fn chat(stream: bool, tokens: u32) -> Vec<u8> {
    raw(
        "POST",
        "/v1/chat/completions",
        &[],
        &chat_body("openai/gpt", stream, tokens),
    )
}

/// Reads `s` until `marker` has been seen (or 10 s); whether it was.
async fn read_until(s: &mut TcpStream, marker: &str) -> bool {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains(marker) {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
            _ => return false,
        }
    }
    true
}

/// The upstream with `faults`, its records kept in memory.
async fn recorded(faults: &str) -> (TestUpstream, Arc<MemoryRecords>) {
    let up = start(faults, 1).await;
    let mem = Arc::new(MemoryRecords::default());
    up.upstream.subscribe(mem.clone());
    (up, mem)
}

/// The one record, once its serving ended (waits up to 5 s for it).
async fn ended(mem: &MemoryRecords) -> UpstreamRecord {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let mut got = mem.take();
        if got.len() == 1 && got[0].done_ms.is_some() {
            return got.remove(0);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no end recorded: {got:?}"
        );
        // Not ended yet: put it back and look again.
        for r in &got {
            rehearse::upstream::RecordSink::record(mem, r);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn served_for(r: &UpstreamRecord) -> Duration {
    Duration::from_millis(r.done_ms.unwrap_or(0).saturating_sub(r.t_ms))
}

#[tokio::test]
async fn a_stalled_then_resumed_stream_is_done_no_sooner_than_its_stall_and_whole() {
    let (up, mem) = recorded(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='1500ms'\n",
    )
    .await;
    let mut s = TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&chat(true, 6)).await.unwrap();
    assert!(read_until(&mut s, "[DONE]").await, "the stream completes");
    let r = ended(&mem).await;
    assert_eq!(r.fault.as_deref(), Some("stall_stream"));
    assert_eq!(r.whole, Some(true), "every token and its ending went out");
    let took = served_for(&r);
    assert!(
        took >= Duration::from_millis(1_500) && took < Duration::from_secs(6),
        "served for {took:?}: no sooner than the 1.5 s stall"
    );
    up.stop().await;
}

#[tokio::test]
async fn a_client_that_leaves_during_the_stall_ends_the_serving_there_not_whole() {
    let (up, mem) = recorded(
        "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='3s'\n",
    )
    .await;
    let mut s = TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&chat(true, 6)).await.unwrap();
    assert!(
        read_until(&mut s, "\"content\":\" t3\"").await,
        "half the tokens"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(s);
    let r = ended(&mem).await;
    assert_eq!(r.whole, Some(false), "the client went away: not whole");
    let took = served_for(&r);
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(2_500),
        "served for {took:?}: ended when the client left, before the 3 s stall was over"
    );
    up.stop().await;
}

#[tokio::test]
async fn a_late_first_token_counts_in_the_serving_and_a_refusal_is_done_at_once_not_whole() {
    let (up, mem) = recorded(
        "[[fault]]\nroute='llm'\nmodel='openai/gpt'\nkind='first_token_delay'\ndelay='1s'\n\
         [[fault]]\nroute='llm'\nkind='status'\nerror='context_length_exceeded'\n",
    )
    .await;
    let mut s = TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&chat(true, 4)).await.unwrap();
    assert!(read_until(&mut s, "[DONE]").await);
    let r = ended(&mem).await;
    assert_eq!(
        (r.fault.as_deref(), r.whole),
        (Some("first_token_delay"), Some(true))
    );
    let took = served_for(&r);
    assert!(
        took >= Duration::from_millis(1_000) && took < Duration::from_secs(6),
        "{took:?}"
    );

    let body = chat_body("other/m", true, 4);
    let mut s = TcpStream::connect(up.addr).await.unwrap();
    s.write_all(&raw("POST", "/v1/chat/completions", &[], &body))
        .await
        .unwrap();
    assert!(read_until(&mut s, "context_length_exceeded").await);
    let r = ended(&mem).await;
    assert_eq!((r.fault.as_deref(), r.whole), (Some("status"), Some(false)));
    assert!(
        served_for(&r) < Duration::from_millis(900),
        "{:?}",
        served_for(&r)
    );
    up.stop().await;
}
