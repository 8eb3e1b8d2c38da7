//! Event ordering: SceneAdvanced epochs arrive strictly increasing with no
//! gaps, or a Snapshot takes their place; session events arrive in order.

use std::time::Duration;

use quire_core::events::{Event, Subscription};
use quire_model::ids::SessionId;

use crate::support::{TestCore, add_page};

/// Checks one session's SceneAdvanced epochs in a stream: each is exactly
/// one more than the last known epoch, where a Snapshot resets what is known.
fn check_epochs(events: &[Event], id: SessionId, start: u64) -> u64 {
    let mut known = start;
    for event in events {
        match event {
            Event::SceneAdvanced {
                session_id, epoch, ..
            } if *session_id == id => {
                assert_eq!(*epoch, known + 1, "gap or reorder after epoch {known}");
                known = *epoch;
            }
            Event::Snapshot { sessions, .. } => {
                if let Some(s) = sessions.iter().find(|s| s.id == id) {
                    assert!(s.epoch >= known, "snapshot went back in time");
                    known = s.epoch;
                }
            }
            _ => {}
        }
    }
    known
}

async fn collect_until(sub: &mut Subscription, mut done: impl FnMut(&Event) -> bool) -> Vec<Event> {
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let next = tokio::time::timeout_at(deadline, sub.next()).await;
        let envelope = next
            .expect("events stopped before the expected one")
            .unwrap();
        let stop = done(&envelope.event);
        out.push(envelope.event.clone());
        if stop {
            return out;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_produce_gapless_ordered_epochs() {
    let t = TestCore::new();
    let id = t.session("Events");
    let mut sub = t.core.subscribe(None);
    let mut tasks = Vec::new();
    for w in 0..8 {
        let core = t.core.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..40 {
                core.apply(id, add_page(&format!("w{w} p{i}")))
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let events = collect_until(&mut sub, |e| {
        matches!(e, Event::SceneAdvanced { epoch: 320, .. })
    })
    .await;
    assert!(matches!(events[0], Event::Snapshot { .. }));
    assert_eq!(check_epochs(&events, id, 0), 320);
}

#[tokio::test]
async fn a_lagging_subscriber_gets_a_snapshot_then_continues() {
    let t = TestCore::new();
    let id = t.session("Lag");
    let mut sub = t.core.subscribe(Some(t.core.events().seq()));
    let mut last = None;
    for i in 0..1100 {
        last = Some(
            t.core
                .blocking()
                .submit(id, add_page(&format!("p{i}")))
                .unwrap(),
        );
    }
    last.unwrap().durable().await.unwrap();
    let first = sub.next().await.unwrap();
    let Event::Snapshot { sessions, .. } = &first.event else {
        panic!("expected a snapshot, got {first:?}")
    };
    assert_eq!(sessions[0].epoch, 1100);
    t.core.apply(id, add_page("after")).await.unwrap();
    let events = collect_until(&mut sub, |e| matches!(e, Event::SceneAdvanced { .. })).await;
    assert_eq!(check_epochs(&events, id, 1100), 1101);
}

#[tokio::test]
async fn session_events_arrive_in_order() {
    let t = TestCore::new();
    let mut sub = t.core.subscribe(None);
    let a = t.session("A");
    let b = t.session("B");
    t.core.make_current(a).unwrap();
    t.core.blocking().close_session(a).unwrap();
    let events = collect_until(&mut sub, |e| matches!(e, Event::SessionClosed { .. })).await;
    let names: Vec<&str> = events.iter().map(Event::name).collect();
    assert_eq!(
        names,
        vec![
            "Snapshot",
            "SessionOpened",
            "CurrentSessionChanged",
            "SessionOpened",
            "CurrentSessionChanged",
            "CurrentSessionChanged",
            "SessionClosed"
        ]
    );
    let last = sub.next().await.unwrap();
    assert_eq!(
        last.event,
        Event::CurrentSessionChanged {
            session_id: Some(b)
        }
    );
    let summary = t.core.sessions();
    assert_eq!(summary.len(), 1);
    assert!(summary[0].current);
}
