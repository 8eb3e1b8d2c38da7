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

use tokio_util::sync::CancellationToken;

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
#[derive(Debug, Clone)]
pub struct Caller {
    /// `None` on a server without users: edits are signed by nobody.
    pub name: Option<Arc<str>>,
    pub role: Role,
    /// Cancelled when a reload takes away what let them in; what they
    /// hold open (event streams, MCP sessions) ends then.
    pub grant: Grant,
}

impl PartialEq for Caller {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.role == other.role
    }
}

impl Eq for Caller {}

/// What a caller's access rests on, shared by everything they hold open:
/// a reload that removes them, changes their token or lowers their role
/// cancels it ([`Users::carry_over`]). Over stdio, nothing revokes it.
#[derive(Debug, Clone, Default)]
pub struct Grant(CancellationToken);

impl Grant {
    /// Resolves once the grant is revoked.
    pub fn revoked(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.0.clone().cancelled_owned()
    }

    pub fn is_revoked(&self) -> bool {
        self.0.is_cancelled()
    }

    pub(crate) fn revoke(&self) {
        self.0.cancel();
    }
}

impl Caller {
    /// The person at a server without tokens: everything is theirs.
    pub fn local() -> Caller {
        Caller {
            name: None,
            role: Role::Admin,
            grant: Grant::default(),
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

    /// Their role, when it is below `review`: the core refuses them the
    /// review states ([`quire_core::Core::below_review`]).
    pub fn below_review(&self) -> Option<&'static str> {
        (self.role < Role::Review).then(|| self.role.as_str())
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
pub fn op_needs(op: &quire_model::op::Op) -> (Role, &'static str) {
    use quire_model::op::Op;
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

/// The effective config (as `GET /api/v1/config` shows it) as `caller`
/// may see it. An admin sees it all. Anyone else sees no filesystem path
/// (the `paths`, `models` and `spell` sections, the engines' programs, any
/// key naming a file, directory or path, and any value that is an
/// absolute path), no token location (`*_file`, `*_env`), and of the team
/// only themselves, by name and role.
pub fn config_as_seen_by(caller: Option<&Caller>, config: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    if caller.is_some_and(Caller::sees_paths) {
        return config;
    }
    let Value::Object(mut map) = config else {
        return config;
    };
    for section in ["paths", "models", "spell"] {
        map.remove(section);
    }
    if let Some(Value::Object(engines)) = map.get_mut("engines") {
        engines.retain(|k, _| k == "allow_unattended");
    }
    if let Some(Value::Object(server)) = map.get_mut("server") {
        let me = caller.and_then(Caller::name);
        if let Some(Value::Array(users)) = server.get_mut("users") {
            users.retain(|u| me.is_some() && u.get("name").and_then(Value::as_str) == me);
        }
    }
    no_locations(Value::Object(map))
}

/// `value` without keys that locate a file or secret and without strings
/// that are absolute paths.
fn no_locations(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    let locates = |key: &str| {
        key.ends_with("_file")
            || key.ends_with("_env")
            || key.ends_with("_dir")
            || key.ends_with("_path")
            || matches!(key, "path" | "dir" | "file" | "command")
    };
    let is_path = |text: &str| {
        text.starts_with('/')
            || text.starts_with("~/")
            || text.starts_with("%d/")
            || text.as_bytes().get(1..3) == Some(b":\\".as_slice())
    };
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, v)| !locates(k) && !v.as_str().is_some_and(is_path))
                .map(|(k, v)| (k, no_locations(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .filter(|v| !v.as_str().is_some_and(is_path))
                .map(no_locations)
                .collect(),
        ),
        other => other,
    }
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
    /// The grant of the machine's person on a server without users.
    open: Grant,
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
                    grant: Grant::default(),
                },
                token: server.token.clone(),
            });
        }
        for user in &server.users {
            users.push(User {
                caller: Caller {
                    name: Some(Arc::from(user.name.as_str())),
                    role: user.role,
                    grant: Grant::default(),
                },
                token: user.token.clone(),
            });
        }
        Users {
            users,
            open: Grant::default(),
        }
    }

    /// The machine's person, on a server without users.
    pub fn local(&self) -> Caller {
        Caller {
            grant: self.open.clone(),
            ..Caller::local()
        }
    }

    /// Takes over from `old`, the users in force until now: a user who
    /// keeps their name, token and at least their role keeps their grant
    /// (their streams go on); every other old user's grant is revoked, and
    /// their names returned. Going from no users to some revokes the
    /// machine's person's grant.
    pub fn carry_over(&mut self, old: &Users) -> Vec<Arc<str>> {
        let mut revoked = Vec::new();
        for before in &old.users {
            let kept = self.users.iter_mut().find(|now| {
                now.caller.name == before.caller.name
                    && now.token == before.token
                    && now.caller.role >= before.caller.role
            });
            match kept {
                Some(now) => now.caller.grant = before.caller.grant.clone(),
                None => {
                    before.caller.grant.revoke();
                    revoked.extend(before.caller.name.clone());
                }
            }
        }
        if self.secured() && !old.secured() {
            old.open.revoke();
        } else {
            self.open = old.open.clone();
        }
        revoked
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
/// Failures after which the address's further failures are refused
/// outright (429) ...
pub const BLOCK_AFTER: u32 = 10;
/// ... for this long after its last failure.
pub const BLOCK_FOR: Duration = Duration::from_secs(60);
/// A failure older than this is forgotten.
pub const FORGET_AFTER: Duration = Duration::from_secs(600);
/// Failures from all addresses together within [`CEILING_WINDOW`] after
/// which every failure is refused outright: guesses spread over many
/// addresses (an IPv6 prefix, a botnet) still meet a bound.
pub const GLOBAL_CEILING: u32 = 1_000;
pub const CEILING_WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered at most (the oldest go first).
const MAX_ADDRESSES: usize = 10_000;

/// Failed authentications, per address and over all addresses. After a
/// few failures from an address each further one is answered later and
/// later; after [`BLOCK_AFTER`], its further failures get 429 until it has
/// been quiet for [`BLOCK_FOR`]; past [`GLOBAL_CEILING`] failures a minute from
/// everywhere, every failure gets 429.
///
/// Only failures are throttled: the guard checks a token before it asks
/// the throttle, so a right token is answered at once whatever its
/// address's count (an office behind one NAT, a guesser next door). A
/// success does not forget its address's failures either: someone with a
/// token who mixes guesses in is held to the same count. The mutex is
/// never held across an `.await`.
#[derive(Debug, Default)]
pub struct Throttle {
    state: Mutex<ThrottleState>,
}

#[derive(Debug, Default)]
struct ThrottleState {
    by_address: HashMap<IpAddr, Failures>,
    /// Failures from every address in the window that began at `since`.
    everywhere: u32,
    since: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

/// One failure, as it is logged and answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// How many from that address (within [`FORGET_AFTER`] of each other).
    pub count: u32,
    /// How long the answer is held back (zero when refused).
    pub delay: Duration,
    /// Refused outright (429), and for how long: the address has failed
    /// too often, or every address together has.
    pub refused: Option<Refusal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// Until a retry may be answered.
    pub retry_after: Duration,
    /// The global ceiling, not this address, is why.
    pub everywhere: bool,
}

impl Throttle {
    fn state(&self) -> std::sync::MutexGuard<'_, ThrottleState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a failed authentication from `address` at `now`, and says
    /// how to answer it.
    pub fn failed(&self, address: IpAddr, now: Instant) -> Failure {
        let mut state = self.state();
        // The ceiling's window.
        match state.since {
            Some(since) if now.duration_since(since) < CEILING_WINDOW => {}
            _ => {
                state.since = Some(now);
                state.everywhere = 0;
            }
        }
        state.everywhere = state.everywhere.saturating_add(1);
        let over_ceiling = state.everywhere > GLOBAL_CEILING;
        let ceiling_left = state.since.map_or(CEILING_WINDOW, |since| {
            CEILING_WINDOW.saturating_sub(now.duration_since(since))
        });
        let failures = &mut state.by_address;
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
        entry.count = entry.count.saturating_add(1);
        entry.last = now;
        let count = entry.count;
        let refused = if count > BLOCK_AFTER {
            Some(Refusal {
                retry_after: BLOCK_FOR,
                everywhere: false,
            })
        } else if over_ceiling {
            Some(Refusal {
                retry_after: ceiling_left.max(Duration::from_secs(1)),
                everywhere: true,
            })
        } else {
            None
        };
        let delay = match (refused, count.checked_sub(FREE_FAILURES + 1)) {
            (Some(_), _) | (None, None) => Duration::ZERO,
            (None, Some(doublings)) => FIRST_DELAY
                .saturating_mul(1u32 << doublings.min(16))
                .min(MAX_DELAY),
        };
        Failure {
            count,
            delay,
            refused,
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
        let answers: Vec<(u64, bool)> = (0..=BLOCK_AFTER)
            .map(|_| {
                let f = throttle.failed(address, start);
                (f.delay.as_millis() as u64, f.refused.is_some())
            })
            .collect();
        let delays: Vec<u64> = answers.iter().map(|a| a.0).collect();
        assert_eq!(delays, [0, 0, 0, 100, 200, 400, 800, 1600, 1600, 1600, 0]);
        assert!(answers[..10].iter().all(|a| !a.1) && answers[10].1);
        // Its next failure within the minute is refused too; another
        // address's is not.
        let again = throttle.failed(address, start + Duration::from_secs(30));
        assert_eq!(again.count, 12);
        assert_eq!(again.refused.map(|r| r.everywhere), Some(false));
        assert_eq!(throttle.failed(other, start).refused, None);
        // A quiet minute after its last failure starts the count again.
        let next = throttle.failed(address, start + Duration::from_secs(30) + BLOCK_FOR);
        assert_eq!((next.count, next.refused), (1, None));
    }

    #[test]
    fn the_ceiling_over_all_addresses_refuses_every_failure_until_its_window_ends() {
        let throttle = Throttle::default();
        let start = Instant::now();
        // One failure each from many addresses: none of them is blocked
        // on its own count.
        for i in 0..GLOBAL_CEILING {
            let address = IpAddr::from([10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
            assert_eq!(throttle.failed(address, start).refused, None, "{i}");
        }
        let fresh: IpAddr = "198.51.100.1".parse().unwrap();
        let over = throttle.failed(fresh, start + Duration::from_secs(20));
        assert_eq!(
            over.refused,
            Some(Refusal {
                retry_after: Duration::from_secs(40),
                everywhere: true
            })
        );
        assert_eq!(over.delay, Duration::ZERO);
        let later = throttle.failed(fresh, start + CEILING_WINDOW);
        assert_eq!(later.refused, None);
    }

    #[test]
    fn addresses_remembered_are_bounded() {
        let throttle = Throttle::default();
        let start = Instant::now();
        for i in 0..(MAX_ADDRESSES as u32 + 50) {
            let address = IpAddr::from([10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
            throttle.failed(
                address,
                start + Duration::from_secs(3600 * u64::from(i / 900)),
            );
        }
        assert!(throttle.state().by_address.len() <= MAX_ADDRESSES);
    }

    fn users(list: &[(&str, &str, Role)]) -> Users {
        Users {
            users: list
                .iter()
                .map(|(name, token, role)| User {
                    caller: Caller {
                        name: Some(Arc::from(*name)),
                        role: *role,
                        grant: Grant::default(),
                    },
                    token: Secret::new(*token),
                })
                .collect(),
            open: Grant::default(),
        }
    }

    #[test]
    fn a_reload_revokes_who_left_changed_token_or_lost_a_role_and_no_one_else() {
        let old = users(&[
            ("ana", "a1", Role::Edit),
            ("bea", "b1", Role::Edit),
            ("rui", "r1", Role::Edit),
            ("eva", "e1", Role::Read),
            ("gus", "g1", Role::Edit),
        ]);
        let held: Vec<Caller> = ["a1", "b1", "r1", "e1", "g1"]
            .iter()
            .map(|t| old.by_token(t).unwrap())
            .collect();
        // ana stays; bea's token changes; rui is read-only now; eva may
        // edit now; gus has gone.
        let mut new = users(&[
            ("ana", "a1", Role::Edit),
            ("bea", "b2", Role::Edit),
            ("rui", "r1", Role::Read),
            ("eva", "e1", Role::Edit),
        ]);
        let revoked = new.carry_over(&old);
        let names: Vec<&str> = revoked.iter().map(|n| &**n).collect();
        assert_eq!(names, ["bea", "rui", "gus"]);
        let still: Vec<bool> = held.iter().map(|c| !c.grant.is_revoked()).collect();
        assert_eq!(still, [true, false, false, true, false]);
        // Who stayed holds the same grant as before the reload.
        let ana = new.by_token("a1").unwrap();
        assert!(!ana.grant.is_revoked());
        let mut newer = users(&[]);
        newer.carry_over(&new);
        assert!(ana.grant.is_revoked());
        // A server that gains users revokes its machine's person.
        let open = users(&[]);
        let person = open.local();
        let mut secured = users(&[("ana", "a1", Role::Admin)]);
        secured.carry_over(&open);
        assert!(person.grant.is_revoked());
    }

    #[test]
    fn only_an_admin_sees_the_servers_paths() {
        let value = serde_json::json!([{"id": 1, "path": "/var/lib/quire/projects/a",
            "inner": {"path": "/x", "name": "b"}}]);
        let reader = Caller {
            name: Some(Arc::from("rui")),
            role: Role::Read,
            grant: Grant::default(),
        };
        assert_eq!(
            as_seen_by(Some(&reader), value.clone()),
            serde_json::json!([{"id": 1, "inner": {"name": "b"}}])
        );
        assert_eq!(as_seen_by(Some(&Caller::local()), value.clone()), value);
    }

    #[test]
    fn below_admin_the_config_names_no_path_no_token_location_and_no_one_else() {
        let config = serde_json::json!({
            "paths": {"data_dir": "/var/lib/quire"},
            "server": {"host": "127.0.0.1", "token": "[redacted]",
                "token_file": "/etc/quire/token", "users": [
                {"name": "ana", "token_file": "%d/users_ana", "role": "admin"},
                {"name": "rui", "token_env": "RUI_TOKEN", "role": "read"}]},
            "attach": {"token_env": "QUIRE_TOKEN"},
            "ocr": {"backend": "tesseract", "tesseract": "/usr/bin/tesseract",
                "timeout_secs": 60},
            "engines": {"allow_unattended": false, "shout": {"command": ["/bin/x"]}},
            "providers": {"local": {"base_url": "http://127.0.0.1:8080",
                "api_key_file": "/etc/quire/key"}},
        });
        let rui = Caller {
            name: Some(Arc::from("rui")),
            role: Role::Edit,
            grant: Grant::default(),
        };
        assert_eq!(
            config_as_seen_by(Some(&rui), config.clone()),
            serde_json::json!({
                "server": {"host": "127.0.0.1", "token": "[redacted]",
                    "users": [{"name": "rui", "role": "read"}]},
                "attach": {},
                "ocr": {"backend": "tesseract", "timeout_secs": 60},
                "engines": {"allow_unattended": false},
                "providers": {"local": {"base_url": "http://127.0.0.1:8080"}},
            })
        );
        let admin = Caller {
            role: Role::Admin,
            ..rui
        };
        assert_eq!(config_as_seen_by(Some(&admin), config.clone()), config);
    }

    #[test]
    fn a_role_allows_what_it_names_and_less() {
        let ana = Caller {
            name: Some(Arc::from("ana")),
            role: Role::Edit,
            grant: Grant::default(),
        };
        assert!(ana.may(Role::Read, "reading").is_ok());
        assert!(ana.may(Role::Edit, "applying an op").is_ok());
        assert_eq!(
            ana.may(Role::Admin, "creating a project").unwrap_err(),
            "creating a project needs the admin role; ana has edit"
        );
    }
}
