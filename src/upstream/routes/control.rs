//! The control API: `GET`/`PUT /_rehearse/faults` (read or replace the live faults; TOML or JSON
//! body; a bad body is a 400 naming the line:col and field, the server keeps serving),
//! `GET /_rehearse/stats` and `POST /_rehearse/shutdown` (the server stops: its listener closes
//! and its connections drop, as when its process dies; a run whose upstream stops exits 3).

use http::{Method, Request, Response, StatusCode};

use super::{Body, error_json, json_response, read_body};
use crate::upstream::Upstream;
use crate::upstream::faults::parse_fault_file;
use crate::wire::route;

/// The origin named in errors about a PUT body.
const PUT_ORIGIN: &str = "PUT /_rehearse/faults";

/// Serves one control request.
pub(crate) async fn handle(req: Request<hyper::body::Incoming>, up: &Upstream) -> Response<Body> {
    let path = req.uri().path().to_string();
    match (req.method().clone(), path.as_str()) {
        (Method::GET, route::FAULTS) => match serde_json::to_string(&up.faults()) {
            Ok(s) => json_response(StatusCode::OK, s),
            Err(e) => error_json(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        (Method::PUT, route::FAULTS) => {
            let body = match read_body(req).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let Ok(text) = std::str::from_utf8(&body) else {
                return error_json(StatusCode::BAD_REQUEST, "the body is not UTF-8");
            };
            match parse_fault_file(text, PUT_ORIGIN) {
                Ok(faults) => {
                    let n = faults.len();
                    up.set_faults(faults);
                    json_response(StatusCode::OK, format!("{{\"faults\":{n}}}"))
                }
                Err(e) => {
                    let body = serde_json::json!({
                        "error": { "message": e.to_string(), "line": e.line, "col": e.col,
                                   "type": "invalid_faults" }
                    });
                    json_response(StatusCode::BAD_REQUEST, body.to_string())
                }
            }
        }
        (Method::GET, route::STATS) => match serde_json::to_string(&up.stats()) {
            Ok(s) => json_response(StatusCode::OK, s),
            Err(e) => error_json(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        (Method::POST, route::SHUTDOWN) => {
            up.halt();
            json_response(StatusCode::OK, "{\"stopping\":true}".to_string())
        }
        (_, route::FAULTS | route::STATS | route::SHUTDOWN) => {
            error_json(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        _ => error_json(StatusCode::NOT_FOUND, "no such control route"),
    }
}
