//! Who a request is, and what it may do: the server's users with their
//! tokens and roles (`[[server.users]]`, or `server.token` as the one user
//! `owner`), the user a trusted reverse proxy names, and the throttle on
//! failed authentication per address.
//!
//! The HTTP guard finds the [`Caller`] of every request (`/mcp` included)
//! and puts it in the request's extensions; routes and MCP tools sign what
//! they change with its name and check its role against what they do.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::config::schema::{Role, ServerConfig};
use crate::config::secret::Secret;

/// The name `server.token` gives its holder.
pub const OWNER: &str = "owner";

/// A reply's mark that its request only read, set by a route the method
/// cannot tell it by (a POST to `/mcp` calling a read-only tool): the
/// access log writes it at `debug`, as it writes a GET.
#[derive(Debug, Clone, Copy)]
pub struct OnlyRead;

/// Who made a request: a configured user, or, on a server with no tokens
/// at all (loopback only), the machine's one person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// `None` on a server without users: edits are signed by nobody.
    pub name: Option<Arc<str>>,
    pub role: Role,
}

impl Caller {
    /// The person at a server without tokens: everything is theirs.
    pub fn local() -> Caller {
        Caller {
            name: None,
            role: Role::Admin,
        }
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether the server's paths may be shown to them (an admin's, or
    /// the machine's own person's).
    pub fn sees_paths(&self) -> bool {
        self.role == Role::Admin
    }

    /// `Ok` when the role allows what needs `needed`; else what to say.
    pub fn may(&self, needed: Role, what: &str) -> Result<(), String> {
        if self.role >= needed {
            return Ok(());
        }
        Err(format!(
            "{what} needs the {} role; {} has {}",
            needed.as_str(),
            self.name().unwrap_or("this caller"),
            self.role.as_str()
        ))
    }
}

/// The role an op needs: the glossary is an admin's, the rest an
/// editor's.
pub fn op_needs(op: &crate::core::op::Op) -> (Role, &'static str) {
    use crate::core::op::Op;
    fn glossary(op: &Op) -> bool {
        match op {
            Op::UpdateGlossary { .. } => true,
            Op::Batch { ops, .. } => ops.iter().any(glossary),
            _ => false,
        }
    }
    if glossary(op) {
        (Role::Admin, "changing the glossary")
    } else {
        (Role::Edit, "changing a project")
    }
}

/// `value` as `caller` may see it: without the server's paths (every
/// `path` key, at any depth) unless they are an admin. `None`: a caller
/// the guard did not name (an open route), who sees no paths either.
pub fn as_seen_by(caller: Option<&Caller>, value: serde_json::Value) -> serde_json::Value {
    if caller.is_some_and(Caller::sees_paths) {
        return value;
    }
    without_paths(value)
}

fn without_paths(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| k != "path")
                .map(|(k, v)| (k, without_paths(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_paths).collect()),
        other => other,
    }
}

/// One user as the guard knows them.
#[derive(Debug)]
struct User {
    caller: Caller,
    token: Secret,
}

/// The users a server accepts, as loaded (replaced whole on reload).
#[derive(Debug, Default)]
pub struct Users {
    users: Vec<User>,
}

impl Users {
    /// `server.token` (as `owner`, admin) and each `[[server.users]]`.
    pub fn from_config(server: &ServerConfig) -> Users {
        let mut users = Vec::new();
        if server.token.is_set() {
            users.push(User {
                caller: Caller {
                    name: Some(Arc::from(OWNER)),
                    role: Role::Admin,
                },
                token: server.token.clone(),
            });
        }
        for user in &server.users {
            users.push(User {
                caller: Caller {
                    name: Some(Arc::from(user.name.as_str())),
                    role: user.role,
                },
                token: user.token.clone(),
            });
        }
        Users { users }
    }

    /// Whether any token is configured: then every request must bring one.
    pub fn secured(&self) -> bool {
        !self.users.is_empty()
    }

    /// The user holding `token`. Every user's token is compared (in
    /// constant time), so the time taken does not say which one matched.
    pub fn by_token(&self, token: &str) -> Option<Caller> {
        let mut found = None;
        for user in &self.users {
            if user.token.matches(token) && found.is_none() {
                found = Some(user.caller.clone());
            }
        }
        found
    }

    /// The user a trusted proxy named, if the server knows them.
    pub fn by_name(&self, name: &str) -> Option<Caller> {
        self.users
            .iter()
            .find(|u| u.caller.name() == Some(name))
            .map(|u| u.caller.clone())
    }

    /// Their names, for the log at start and reload.
    pub fn names(&self) -> Vec<String> {
        self.users
            .iter()
            .filter_map(|u| u.caller.name().map(str::to_owned))
            .collect()
    }
}

/// Failures from one address before its answers slow down.
const FREE_FAILURES: u32 = 3;
/// The first delay, doubled with each further failure up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_millis(1_600);
/// Failures after which the address is refused outright (429) ...
pub const BLOCK_AFTER: u32 = 10;
/// ... for this long after its last failure.
pub const BLOCK_FOR: Duration = Duration::from_secs(60);
/// A failure older than this is forgotten.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Addresses remembered at most (the oldest go first).
const MAX_ADDRESSES: usize = 10_000;

/// What the throttle says of a request from an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Go on (checking its token).
    Pass,
    /// Refused without looking: too many failures; retry after this long.
    Blocked(Duration),
}

/// Failed authentications per address: after a few, each failure is
/// answered later and later; after [`BLOCK_AFTER`], the address gets 429
/// until it has been quiet for [`BLOCK_FOR`]. A success forgets the
/// address's failures.
#[derive(Debug, Default)]
pub struct Throttle {
    failures: Mutex<HashMap<IpAddr, Failures>>,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

/// One failure, as it is logged and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// How many in a row from that address (within [`FORGET_AFTER`]).
    pub count: u32,
    /// How long the answer is held back.
    pub delay: Duration,
    /// Whether the address is now refused outright.
    pub blocked: bool,
}

impl Throttle {
    fn failures(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Failures>> {
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a request from `address` may try a token at `now`.
    pub fn check(&self, address: IpAddr, now: Instant) -> Verdict {
        match self.failures().get(&address) {
            Some(f) if f.count >= BLOCK_AFTER => {
                let until = f.last + BLOCK_FOR;
                if now < until {
                    Verdict::Blocked(until - now)
                } else {
                    Verdict::Pass
                }
            }
            _ => Verdict::Pass,
        }
    }

    /// Counts a failed authentication from `address` at `now`.
    pub fn failed(&self, address: IpAddr, now: Instant) -> Failure {
        let mut failures = self.failures();
        if failures.len() >= MAX_ADDRESSES && !failures.contains_key(&address) {
            failures.retain(|_, f| now.duration_since(f.last) < FORGET_AFTER);
            if failures.len() >= MAX_ADDRESSES
                && let Some(oldest) = failures.iter().min_by_key(|(_, f)| f.last).map(|(a, _)| *a)
            {
                failures.remove(&oldest);
            }
        }
        let entry = failures.entry(address).or_insert(Failures {
            count: 0,
            last: now,
        });
        let stale = now.duration_since(entry.last) >= FORGET_AFTER
            || (entry.count >= BLOCK_AFTER && now.duration_since(entry.last) >= BLOCK_FOR);
        if stale {
            entry.count = 0;
        }
        entry.count += 1;
        entry.last = now;
        let count = entry.count;
        let delay = match count.checked_sub(FREE_FAILURES + 1) {
            None => Duration::ZERO,
            Some(doublings) => FIRST_DELAY
                .saturating_mul(1u32 << doublings.min(16))
                .min(MAX_DELAY),
        };
        Failure {
            count,
            delay,
            blocked: count >= BLOCK_AFTER,
        }
    }

    /// A successful authentication from `address`: its failures are
    /// forgotten.
    pub fn succeeded(&self, address: IpAddr) {
        let mut failures = self.failures();
        if !failures.is_empty() {
            failures.remove(&address);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_slow_down_then_block_and_a_quiet_minute_lifts_it() {
        let throttle = Throttle::default();
        let address: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        let start = Instant::now();
        let delays: Vec<u64> = (0..BLOCK_AFTER)
            .map(|_| throttle.failed(address, start).delay.as_millis() as u64)
            .collect();
        assert_eq!(delays, [0, 0, 0, 100, 200, 400, 800, 1600, 1600, 1600]);
        assert_eq!(
            throttle.check(address, start + Duration::from_secs(1)),
            Verdict::Blocked(Duration::from_secs(59))
        );
        assert_eq!(throttle.check(other, start), Verdict::Pass);
        assert_eq!(throttle.check(address, start + BLOCK_FOR), Verdict::Pass);
        // A failure after the block starts the count again.
        let next = throttle.failed(address, start + BLOCK_FOR);
        assert_eq!((next.count, next.blocked), (1, false));
    }

    #[test]
    fn a_success_forgets_the_failures() {
        let throttle = Throttle::default();
        let address: IpAddr = "::1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..5 {
            throttle.failed(address, now);
        }
        throttle.succeeded(address);
        assert_eq!(throttle.failed(address, now).count, 1);
    }

    #[test]
    fn only_an_admin_sees_the_servers_paths() {
        let value = serde_json::json!([{"id": 1, "path": "/var/lib/quire/projects/a",
            "inner": {"path": "/x", "name": "b"}}]);
        let reader = Caller {
            name: Some(Arc::from("rui")),
            role: Role::Read,
        };
        assert_eq!(
            as_seen_by(Some(&reader), value.clone()),
            serde_json::json!([{"id": 1, "inner": {"name": "b"}}])
        );
        assert_eq!(as_seen_by(Some(&Caller::local()), value.clone()), value);
    }

    #[test]
    fn a_role_allows_what_it_names_and_less() {
        let ana = Caller {
            name: Some(Arc::from("ana")),
            role: Role::Edit,
        };
        assert!(ana.may(Role::Read, "reading").is_ok());
        assert!(ana.may(Role::Edit, "applying an op").is_ok());
        assert_eq!(
            ana.may(Role::Admin, "creating a project").unwrap_err(),
            "creating a project needs the admin role; ana has edit"
        );
    }
}
