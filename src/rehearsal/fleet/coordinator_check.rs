//! The `[coordinator] url` check before a fleet run: the hosts connect lazily and fall back to
//! their local breakers when Redis does not answer, so a Redis that is not there would turn the
//! whole `redis` run into N hosts deciding alone with nothing saying so. The run connects and
//! sends `PING` first (bounded); no `PONG` refuses the run (verdict `error`, exit 3) with the
//! reason. The URL as shown hides its password.

use std::time::Duration;

use crate::rehearsal::fleet::error::FleetError;

/// How long the check waits for the connection and the `PONG` together.
const PING_WITHIN: Duration = Duration::from_secs(2);

/// `url` with the password of its `user:password@` part replaced by `***` (the report and the
/// progress lines show where the coordinator was, never its secret).
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let hidden = match userinfo.split_once(':') {
                Some((user, _)) => format!("{user}:***"),
                None if userinfo.is_empty() => String::new(),
                // `redis://SECRET@host`: the lone part may be the password.
                None => "***".to_string(),
            };
            format!("{scheme}://{hidden}@{host}{path}")
        }
        None => url.to_string(),
    }
}

/// Checks that the Redis at `url` answers `PING` within [`PING_WITHIN`].
pub(crate) async fn check_url(url: &str) -> Result<(), FleetError> {
    crate::engine::coordinator::redis::ping(url, PING_WITHIN)
        .await
        .map_err(|e| FleetError::Coordinator {
            url: redacted(url),
            why: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shown_url_never_holds_the_password() {
        assert_eq!(redacted("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(
            redacted("redis://app:s3cret@10.0.0.2:6380/2"),
            "redis://app:***@10.0.0.2:6380/2"
        );
        assert_eq!(redacted("redis://:s3cret@h:1"), "redis://:***@h:1");
        assert_eq!(redacted("redis://s3cret@h"), "redis://***@h");
        assert!(!redacted("rediss://u:p%40ss@h:1/0").contains("p%40ss"));
    }

    #[tokio::test]
    async fn a_redis_that_is_not_there_is_an_error_within_the_bound() {
        // A loopback port nobody listens on: bound, then closed.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(1);
        let t = tokio::time::Instant::now();
        let e = check_url(&format!("redis://127.0.0.1:{port}")).await;
        assert!(t.elapsed() <= PING_WITHIN + Duration::from_millis(500));
        let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains(&format!("redis://127.0.0.1:{port}")), "{msg}");
    }

    #[tokio::test]
    async fn a_listener_that_never_answers_is_an_error_within_the_bound() {
        // Accepts the connection (the kernel's backlog) and never says anything.
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let t = tokio::time::Instant::now();
        let e = check_url(&format!("redis://127.0.0.1:{port}")).await;
        assert!(e.is_err());
        let took = t.elapsed();
        assert!(took <= PING_WITHIN + Duration::from_millis(500), "{took:?}");
        drop(l);
    }
}
