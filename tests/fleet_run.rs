//! Fleet mode end to end, through the real binary: 12 host processes, the run's own
//! redis-server on a free loopback port, the mock upstream on loopback. The storm fixture at
//! speed 1 (none vs redis), the same storm through Redis with host clocks skewed ±2 s, and a
//! run whose redis-server is killed mid-run and restarted, then slowed past the hosts' call
//! bound, and a profile cooldown one host writes keeping the others off that profile; a
//! `[coordinator] url` nobody answers refusing the run (exit 3), one that answers named in the
//! report with whether every host stayed on it. Figures come from report.json and
//! are asserted with tolerances for a busy 2-core machine; the strict figures are the
//! scenarios' own expectations. Bad `[fleet]`/`[coordinator]` tables are exit 2 with
//! file:line:col. Fleet runs take the lock below so no two of them overlap (13+ processes
//! each).

use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::report_contracts::assert_report_contracts;
use crate::support::run::{
    assert_mutants, fixture, mutated_copy, report_json, reported_path, run_scenario,
    run_scenario_with_mutants, show,
};

/// One fleet run at a time.
static FLEET: Mutex<()> = Mutex::new(());

/// Slack for scheduling noise on a probe gap at the upstream (scenario ms).
const GAP_SLACK_MS: u64 = 20;

fn fleet_run<'a>(report: &'a Value, coordination: &str) -> &'a Value {
    report["fleet"]["runs"]
        .as_array()
        .expect("report.fleet.runs")
        .iter()
        .find(|r| r["coordination"] == coordination)
        .unwrap_or_else(|| panic!("no {coordination} run in {}", report["fleet"]))
}

fn dep<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["deps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["dep"] == name)
        .unwrap_or_else(|| panic!("no dep {name} in {}", run["deps"]))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The run's failed expectation rows, as "[policy] detail".
fn failed_rows(report: &Value) -> Vec<String> {
    report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["expectations"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["status"] == "fail")
                .map(move |e| format!("[{}] {}", p["policy"], e["detail"]))
        })
        .collect()
}

/// Every host of every run ended cleanly and said `done`; nothing of the run is still running
/// (no process names the run directory, the spawned redis-server's pid is gone).
fn assert_clean(report: &Value, dir: &Path) {
    for run in report["fleet"]["runs"].as_array().unwrap() {
        for h in run["hosts"].as_array().unwrap() {
            assert!(
                h["exit"].is_null(),
                "host {} ended badly: {}",
                h["id"],
                h["exit"]
            );
            assert!(u(&h["sent"]) > 0, "host {} sent nothing", h["id"]);
            assert!(u(&h["scrapes_ok"]) > 0, "host {} never scraped", h["id"]);
        }
        if let Some(c) = run["coordinator"].as_str()
            && let Some(pid) = c.split("(pid ").nth(1).and_then(|r| r.split(')').next())
        {
            let alive = std::process::Command::new("kill")
                .args(["-0", pid])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(!alive, "redis-server {pid} still runs after the run");
        }
    }
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .expect("ps");
    let needle = dir.display().to_string();
    let left: Vec<String> = String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|l| l.contains(&needle))
        .map(str::to_string)
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn twelve_hosts_alone_storm_the_upstream_and_through_redis_probe_one_at_a_time_at_speed_1() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario_with_mutants(&fixture("fleet-probe-storm"), "1", tmp.path());
    let report = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let (entries, mutants) = assert_mutants(&dir);
    eprintln!("fleet-probe-storm: {mutants} perturbations of {entries} expectations, none passed");
    let fails = failed_rows(&report);
    let none = fleet_run(&report, "none");
    let redis = fleet_run(&report, "redis");
    let (a, b) = (dep(none, "crm_search"), dep(redis, "crm_search"));
    eprintln!(
        "fleet-probe-storm x1: none {} | redis {} | redis closes {}",
        a["spacing"], b["spacing"], b["closes"]
    );
    // Alone: every host probes on its own, many probes inside one interval.
    assert!(u(&a["spacing"]["probes"]) >= 24, "{}", a["spacing"]);
    assert!(
        u(&a["spacing"]["max_in_interval"]) >= 3,
        "no storm: {}",
        a["spacing"]
    );
    let alone_gap = u(&a["spacing"]["min_gap_ms"]);
    assert!(
        alone_gap < 250,
        "alone, probes {alone_gap} ms apart at least"
    );
    // Through Redis: one probe per interval fleet-wide, closes on 2 distinct hosts.
    let gap = u(&b["spacing"]["min_gap_ms"]);
    assert!(
        gap + GAP_SLACK_MS >= 250,
        "redis: two probes {gap} ms apart"
    );
    assert!(u(&b["spacing"]["max_per_host_in_interval"]) <= 1);
    assert!(
        u(&b["spacing"]["probes"]) * 3 <= u(&a["spacing"]["probes"]),
        "redis {} vs none {}",
        b["spacing"],
        a["spacing"]
    );
    let closes = b["closes"].as_array().unwrap();
    assert!(!closes.is_empty(), "redis: crm_search never closed");
    for c in closes {
        assert!(
            c["ok_hosts"].as_array().unwrap().len() >= 2,
            "close on one host: {c}"
        );
    }
    // The verdict: pass, or a spacing row that failed inside the slack above.
    assert!(
        out.status.code() == Some(0)
            || (out.status.code() == Some(1)
                && gap + GAP_SLACK_MS >= 250
                && fails
                    .iter()
                    .all(|f| f.contains("apart") || f.contains("probe interval"))),
        "{fails:#?}\n{}",
        show(&out)
    );
    // Every host appears at the upstream under its own name.
    let up = std::fs::read_to_string(dir.join("upstream.jsonl")).unwrap();
    for i in 0..12 {
        assert!(
            up.contains(&format!("\"host\":\"h{i}\"")),
            "h{i} not in upstream.jsonl"
        );
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Fleet</h2>") && html.contains("class=\"fleet\""));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("| most probes within 0.250s |"), "{md}");
    assert_report_contracts(&dir);
    assert_clean(&report, &dir);
}

#[test]
fn host_clocks_skewed_two_seconds_change_nothing_through_redis() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let path = mutated_copy("fleet-probe-storm", tmp.path(), "skew", |t| {
        t.replace(
            "coordination = [\"none\", \"redis\"]",
            "coordination = [\"redis\"]\nclock_skew = \"2s\"",
        )
        .replace("policy = \"none\"", "policy = \"redis\"")
        .replace("min_probes_per_interval = 3\n", "")
    });
    let out = run_scenario(&path, "2", tmp.path());
    let report = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let redis = fleet_run(&report, "redis");
    let skews: Vec<i64> = redis["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["skew_ms"].as_i64().unwrap())
        .collect();
    assert_eq!((skews[0], skews[11]), (-2000, 2000), "{skews:?}");
    let b = dep(redis, "crm_search");
    eprintln!(
        "fleet-probe-storm x2 skew ±2s: {} closes {}",
        b["spacing"], b["closes"]
    );
    let gap = u(&b["spacing"]["min_gap_ms"]);
    // Scenario ms at speed 2: the wall-clock slack counts double.
    assert!(
        gap + 2 * GAP_SLACK_MS >= 250,
        "skewed: two probes {gap} ms apart"
    );
    assert!(u(&b["spacing"]["max_per_host_in_interval"]) <= 1);
    let closes = b["closes"].as_array().unwrap();
    assert!(!closes.is_empty());
    for c in closes {
        assert!(c["ok_hosts"].as_array().unwrap().len() >= 2, "{c}");
    }
    let spread = u(&b["max_spread_ms"]);
    assert!(spread <= 250, "hosts disagree for {spread} ms");
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        show(&out)
    );
    assert_clean(&report, &dir);
}

#[test]
fn redis_killed_mid_run_hosts_fall_back_keep_serving_and_rejoin_within_an_interval() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario_with_mutants(&fixture("fleet-redis-down"), "2", tmp.path());
    let report = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let (entries, mutants) = assert_mutants(&dir);
    eprintln!("fleet-redis-down: {mutants} perturbations of {entries} expectations, none passed");
    let redis = fleet_run(&report, "redis");
    let faults: Vec<&str> = redis["coordinator_faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[1].as_str().unwrap())
        .collect();
    assert!(
        faults.len() == 4
            && faults[0].contains("killed")
            && faults[1].contains("restarted")
            && faults[2].contains("delayed"),
        "{faults:?}"
    );
    let o = &redis["outages"][0];
    eprintln!("fleet-redis-down x2: outage {o}");
    assert_eq!(u(&o["hosts_fell_back"]), 12, "{o}");
    assert_eq!(u(&o["hosts_rejoined"]), 12, "{o}");
    let rejoin = u(&o["rejoin_ms"]);
    assert!(
        rejoin <= 250,
        "last host rejoined {rejoin} ms after redis was back"
    );
    assert!(u(&o["max_per_host_in_interval"]) <= 1, "{o}");
    for h in redis["hosts"].as_array().unwrap() {
        assert!(u(&h["coordinator_errors"]) > 0, "{h}");
        // Once for the kill, once for the 300 ms latency (past the 100 ms call bound).
        assert!(u(&h["fell_back"]) >= 2, "{h}");
        assert_eq!(h["mode"], "redis", "{h}");
    }
    // They kept serving while Redis was gone (10 s to 16 s of scenario time).
    let up = std::fs::read_to_string(dir.join("upstream.jsonl")).unwrap();
    let during: std::collections::BTreeSet<String> = up
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| (10_500..15_500).contains(&r["scenario_ms"].as_u64().unwrap_or(0)))
        .filter_map(|r| r["host"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        during.len(),
        12,
        "hosts serving during the outage: {during:?}"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("fell back to local breakers"), "{md}");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_report_contracts(&dir);
    assert_clean(&report, &dir);
}

/// The hosts whose events (in the run's `hosts/COORDINATION/` tree) hold a `cooldown_adopted`.
fn adopting_hosts(dir: &Path, coordination: &str) -> Vec<String> {
    let root = dir.join("hosts").join(coordination);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let host = e.unwrap().path();
        let mut text = String::new();
        for f in std::fs::read_dir(&host).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|x| x == "jsonl") {
                text.push_str(&std::fs::read_to_string(&f).unwrap());
            }
        }
        if text.contains("\"event\":\"cooldown_adopted\"") {
            out.push(host.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

/// Hosts of the `coordination` run whose user requests got a 429 on `fp`'s profile, from
/// upstream.jsonl.
fn rate_limited_hosts(dir: &Path, coordination: &str, fp: &str) -> Vec<String> {
    let up = std::fs::read_to_string(dir.join("upstream.jsonl")).unwrap();
    let hosts: std::collections::BTreeSet<String> = up
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["policy"] == coordination && r["fault"] == "rate_limit")
        // Canaries check every profile's endpoint whatever the cooldowns: not user traffic.
        .filter(|r| r["canary"] != true)
        .filter(|r| r["profile_fp"] == fp)
        .filter_map(|r| r["host"].as_str().map(str::to_string))
        .collect();
    hosts.into_iter().collect()
}

#[test]
fn a_cooldown_one_host_writes_keeps_the_fleet_off_the_profile_through_redis() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario_with_mutants(&fixture("fleet-cooldown-share"), "2", tmp.path());
    let report = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let (entries, mutants) = assert_mutants(&dir);
    eprintln!(
        "fleet-cooldown-share: {mutants} perturbations of {entries} expectations, none passed"
    );
    let fp = rehearse::util::fingerprint("sk-fleet-profile-a");
    let alone = rate_limited_hosts(&dir, "none", &fp);
    let shared = rate_limited_hosts(&dir, "redis", &fp);
    let adopted = adopting_hosts(&dir, "redis");
    eprintln!(
        "fleet-cooldown-share x2: 429s on profile a from hosts none {alone:?}, redis {shared:?}; \
         adopted on {adopted:?}"
    );
    assert_eq!(
        alone.len(),
        6,
        "alone every host walks into the 429: {alone:?}"
    );
    assert!(
        (1..=3).contains(&shared.len()),
        "through redis the cooldown should keep most hosts off: {shared:?}"
    );
    // Every host that never got the 429 stayed off the profile because it adopted the cooldown.
    let spared: Vec<String> = (0..6)
        .map(|i| format!("h{i}"))
        .filter(|h| !shared.contains(h))
        .collect();
    assert!(
        spared.iter().all(|h| adopted.contains(h)),
        "spared hosts {spared:?}, adopted on {adopted:?}"
    );
    assert!(
        adopting_hosts(&dir, "none").is_empty(),
        "alone, nobody adopts"
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        failed_rows(&report).is_empty(),
        "{:?}",
        failed_rows(&report)
    );
    assert_report_contracts(&dir);
    assert_clean(&report, &dir);
}

/// The processes whose command line names `needle` (the run's directory), as "pid args".
fn processes_naming(needle: &str) -> Vec<String> {
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .output()
        .expect("ps");
    String::from_utf8_lossy(&ps.stdout)
        .lines()
        .filter(|l| l.contains(needle) && !l.contains(" ps -eo"))
        .map(str::to_string)
        .collect()
}

fn pid_alive(pid: u32) -> bool {
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_fleet_run_killed_with_sigkill_leaves_no_redis_server_and_no_host_running() {
    use std::io::BufRead;
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let path = mutated_copy("fleet-cooldown-share", tmp.path(), "sigkill", |t| {
        t.replace(
            "coordination = [\"none\", \"redis\"]",
            "coordination = [\"redis\"]",
        )
        .replace("policy = \"none\"", "policy = \"redis\"")
    });
    let reports = tmp.path().join("reports");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--no-progress", "--speed", "1", "--scenario"])
        .arg(&path)
        .arg("--report-dir")
        .arg(&reports)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rehearse");
    // The run's progress lines (stderr) name the redis-server it spawned.
    let stderr = child.stderr.take().unwrap();
    let mut redis_pid = None;
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if let Some(pid) = line
            .split("redis-server (pid ")
            .nth(1)
            .and_then(|r| r.split(')').next())
            .and_then(|p| p.parse::<u32>().ok())
        {
            redis_pid = Some(pid);
            break;
        }
    }
    let redis_pid =
        redis_pid.unwrap_or_else(|| panic!("no redis-server pid in the run's output: {seen:?}"));
    // Keep draining its stderr so the run never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    // Mid-run: hosts replaying, redis answering.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let needle = reports.display().to_string();
    assert!(
        pid_alive(redis_pid),
        "redis-server {redis_pid} should run now"
    );
    let hosts = processes_naming(&needle);
    assert!(hosts.len() >= 6, "the hosts should run now: {hosts:?}");
    child.kill().expect("SIGKILL the run");
    let _ = child.wait();
    let t = tokio::time::Instant::now();
    while t.elapsed() < std::time::Duration::from_secs(15)
        && (pid_alive(redis_pid) || !processes_naming(&needle).is_empty())
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!(
        "fleet run SIGKILLed: redis-server and hosts gone {} ms later",
        t.elapsed().as_millis()
    );
    assert!(
        !pid_alive(redis_pid),
        "redis-server {redis_pid} outlived the run"
    );
    let left = processes_naming(&needle);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// An edit of a scenario's text.
type Edit = dyn Fn(String) -> String;

#[test]
fn bad_fleet_and_coordinator_tables_are_exit_2_with_file_line_col() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &Edit, &str); 4] = [
        (
            "hosts",
            &|t: String| t.replace("hosts = 12", "hosts = 0"),
            "fleet.hosts",
        ),
        (
            "nocoord",
            &|t: String| t.replace("[coordinator]\nspawn = true\n", ""),
            "fleet.coordination",
        ),
        (
            "both",
            &|t: String| {
                t.replace(
                    "spawn = true",
                    "spawn = true\nurl = \"redis://127.0.0.1:1\"",
                )
            },
            "coordinator.spawn",
        ),
        (
            "kind",
            &|t: String| t.replace("kind = \"down\"", "kind = \"reset\""),
            "route `coordinator` takes kind `down` or `latency`",
        ),
    ];
    for (tag, edit, want) in cases {
        let name = if tag == "kind" {
            "fleet-redis-down"
        } else {
            "fleet-probe-storm"
        };
        let path = mutated_copy(name, tmp.path(), tag, edit);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
            .args(["validate", path.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tag}: {}", show(&out));
        let prefix = format!("{}:", path.display());
        let located = err.lines().any(|l| {
            l.contains(&prefix)
                && l.split(&prefix)
                    .nth(1)
                    .and_then(|r| r.split(':').next())
                    .is_some_and(|n| n.parse::<usize>().is_ok())
        });
        assert!(located && err.contains(want), "{tag}: {err}");
    }
}

/// `fleet-cooldown-share` through Redis only, at the `[coordinator] url` given.
fn through_url(dir: &Path, tag: &str, url: &str) -> std::path::PathBuf {
    let url = url.to_string();
    mutated_copy("fleet-cooldown-share", dir, tag, move |t| {
        t.replace(
            "coordination = [\"none\", \"redis\"]",
            "coordination = [\"redis\"]",
        )
        .replace("spawn = true", &format!("url = {url:?}"))
        // The `none` run's own expectations go with it.
        .replace(
            "[[expect.attempts]]\nprofile = \"openai-codex:a\"\nfault = \"rate_limit\"\npolicy = \"none\"\nhosts_at_least = 6\n",
            "",
        )
        .replace(
            "[[expect.per_turn]]\nrequests_at_least = 2\nfrom = \"5s\"\nturns_at_least = 6\npolicy = \"none\"\n",
            "",
        )
    })
}

#[test]
fn a_coordinator_url_nobody_answers_refuses_the_run_with_exit_3_and_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    // A loopback port nobody listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = through_url(tmp.path(), "deadurl", &format!("redis://127.0.0.1:{port}"));
    let t = tokio::time::Instant::now();
    let out = run_scenario(&path, "2", tmp.path());
    let report = report_json(&out);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert_eq!(report["verdict"], "error", "{}", report["reason"]);
    let reason = report["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains(&format!("redis://127.0.0.1:{port}")) && reason.contains("PING"),
        "{reason}"
    );
    // Refused before any host started: no run in the fleet section, the arm never ran.
    assert!(
        report["fleet"]["runs"].as_array().unwrap().is_empty(),
        "{}",
        report["fleet"]
    );
    assert_eq!(report["policies"][0]["status"], "not_run");
    assert!(
        t.elapsed() < std::time::Duration::from_secs(15),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn a_coordinator_url_that_answers_is_used_and_the_report_says_every_host_was_on_it() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let redis = crate::support::redis::RedisServer::start();
    let tmp = tempfile::tempdir().unwrap();
    let path = through_url(tmp.path(), "liveurl", &redis.url());
    let out = run_scenario(&path, "2", tmp.path());
    let report = report_json(&out);
    let dir = reported_path(&out).parent().unwrap().to_path_buf();
    let run = fleet_run(&report, "redis");
    let used = &run["coordinator_used"];
    eprintln!("fleet-cooldown-share through its url: coordinator used {used}");
    assert_eq!(used["kind"], "redis", "{used}");
    assert_eq!(run["coordinator"], redis.url().as_str());
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let line = format!("- coordinator used: redis ({})", redis.url());
    // On a busy machine a host may miss the hosts' 100 ms bound on a Redis call and fall back
    // for a moment: then the line says so, with the counts report.json holds.
    let want = match u(&used["hosts_fell_back"]) {
        0 => format!("{line} on all 6 hosts for the whole run"),
        n => format!("{line} with local fallback: {n} of 6 hosts fell back"),
    };
    assert!(md.contains(&want), "{want}\n{md}");
    // Used, not refused: the scenario's own bounds (checked by the fixture's test above) decide
    // pass or fail.
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "{}",
        show(&out)
    );
    assert_report_contracts(&dir);
}

/// An expectation naming the scenario's one policy is judged in every coordination
/// run (each runs that policy); it was filtered out by coordination name and never judged, so
/// `at_least = 99999` passed. Two hosts alone, one coordination run.
#[test]
fn an_expectation_naming_the_fleets_policy_is_judged_in_its_coordination_runs() {
    let _one = FLEET.lock().unwrap_or_else(|p| p.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let path = mutated_copy("fleet-probe-storm", tmp.path(), "policy", |t| {
        let head = &t[..t.find("[[expect.").expect("the fixture has expectations")];
        format!(
            "{}\n[[expect.metric]]\nseries = 'requests_total{{dep=\"crm_search\"}}'\n\
             at_least = 99999\npolicy = \"retry-gate\"\n",
            head.replace("hosts = 12", "hosts = 2")
                .replace(
                    "coordination = [\"none\", \"redis\"]",
                    "coordination = [\"none\"]"
                )
                .replace("[coordinator]\nspawn = true\n", "")
        )
    });
    let out = run_scenario(&path, "4", tmp.path());
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report = report_json(&out);
    let p = &report["policies"][0];
    assert_eq!(p["policy"], "none");
    let row = p["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "metric")
        .unwrap_or_else(|| panic!("the metric row was filtered out: {p}"));
    assert_eq!(row["status"], "fail", "{row}");
    assert_eq!(row["series"], "requests_total{dep=\"crm_search\"}");
}
