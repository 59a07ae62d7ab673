//! Portkey listens on every interface by itself (`serve({ fetch, port })` with no host); the
//! harness forces its bind to 127.0.0.1 with a `node --require` preload. While it runs, a
//! connect to another address of this machine is refused — 127.0.0.2, which any listener on
//! the wildcard address accepts — and the kernel's table of listening sockets holds its port on
//! 127.0.0.1 only (IPv4 and IPv6). A turn through it carries the generated `x-portkey-config`
//! and comes back with what it decided; the stop leaves nothing running.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use rehearse::gateway::Supervisor;
use rehearse::gateway::openclaw::{GatewayConfig, ModelSpec, ProfileSpec, ProviderSpec};
use rehearse::gateway::portkey::Portkey;

/// The local addresses (hex, as /proc/net/tcp{,6} write them) listening on `port`.
fn listening_on(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is ADDR:PORT (hex); state 0A is LISTEN.
            if f.len() > 3
                && f[3] == "0A"
                && let Some((addr, p)) = f[1].split_once(':')
                && u16::from_str_radix(p, 16).ok() == Some(port)
            {
                out.push(format!("{table} {addr}"));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn portkey_listens_on_127_0_0_1_only_and_a_connect_to_another_local_address_is_refused() {
    let install = super::install();
    let tmp = tempfile::tempdir().unwrap();
    // A stand-in upstream: one canned chat completion per connection, on loopback.
    let up = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = up.local_addr().unwrap();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut s, _)) = up.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = s.read(&mut buf).await;
                let body = r#"{"id":"x","object":"chat.completion","model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"t1 t2"},"finish_reason":"stop"}]}"#;
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(resp.as_bytes()).await;
            });
        }
    });
    let config = GatewayConfig {
        providers: vec![ProviderSpec {
            id: "mockai".into(),
            base_url: format!("http://{up_addr}/v1"),
            timeout_seconds: 30,
            models: vec![ModelSpec::new("m1")],
        }],
        profiles: vec![ProfileSpec {
            id: "mockai:a".into(),
            provider: "mockai".into(),
            key: "sk-loopback-A".into(),
        }],
        primary: "mockai/m1".into(),
        fallbacks: vec![],
        agent_timeout_seconds: 600,
    };
    let portkey = Portkey::new(install);
    let started = portkey.start(Some(&config), tmp.path()).await;
    let Ok(mut gw) = started else {
        panic!(
            "Portkey did not start: {}",
            started.err().map(|e| e.to_string()).unwrap_or_default()
        );
    };
    let url = gw.url();
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    assert!(gw.alive());

    // It answers on 127.0.0.1 ...
    let to = |ip: Ipv4Addr| {
        TcpStream::connect_timeout(&SocketAddr::from((ip, port)), Duration::from_secs(2))
    };
    assert!(to(Ipv4Addr::LOCALHOST).is_ok(), "127.0.0.1:{port} answers");
    // ... and nowhere else: a wildcard listener would take 127.0.0.2 too.
    let other = to(Ipv4Addr::new(127, 0, 0, 2));
    assert_eq!(
        other.as_ref().map_err(std::io::Error::kind).err(),
        Some(std::io::ErrorKind::ConnectionRefused),
        "a connect to 127.0.0.2:{port} must be refused: {other:?}"
    );
    let listening = listening_on(port);
    assert_eq!(
        listening,
        ["/proc/net/tcp 0100007F"],
        "its one listening socket is 127.0.0.1:{port}"
    );

    // A turn carries the generated config and comes back with Portkey's account of it.
    let client = gw.client().unwrap();
    let o = client
        .send(&rehearse::gateway::Turn {
            session: "s1".into(),
            stream: false,
            message: "hi".into(),
            messages: None,
        })
        .await;
    assert_eq!(o.status, Some(200), "{o:?}");
    assert_eq!(
        o.headers
            .get("x-portkey-last-used-option-index")
            .map(String::as_str),
        Some("config.targets[0]"),
        "{o:?}"
    );
    let effective = gw.effective().unwrap();
    let shown = effective.config.unwrap().to_string();
    assert!(
        !shown.contains("sk-loopback-A"),
        "keys are fingerprinted: {shown}"
    );
    drop(client);

    let ended = gw.stop().await;
    let stop = ended.stop.unwrap();
    assert!(stop.survivors.is_empty(), "{stop:?}");
    assert!(
        super::none_left_under(tmp.path()).is_empty(),
        "nothing left running"
    );
    assert!(
        to(Ipv4Addr::LOCALHOST).is_err(),
        "stopped: nothing listens on {port}"
    );
}
