//! Suggestions on a shared server (spec 10, "Suggestions"): a suggester
//! proposes and votes but accepts nothing; an editor accepts, and the
//! translation names both; a final segment's suggestion is a reviewer's
//! to accept; the history says who did each; the acceptor's undo brings
//! the suggestion back; the open ones outlive a restart.

use serde_json::{Value, json};

use super::review::{ANA, OWNER, SID, VERA, team};
use crate::harness::Sandbox;
use crate::http_support::{Binary, first_page};

/// The team's server, a project with a text page of two segments: the
/// sandbox, the server, the session's route prefix, the project id, the
/// page and its nodes.
fn with_a_page() -> (Sandbox, Binary, String, Value, String, Vec<String>) {
    let s = Sandbox::new();
    let server = team(&s, &USERS);
    let c = server.client();
    let prefix = c.new_project(OWNER, "Suggestions");
    let scene = c.text_page(&prefix, OWNER, "One.\n\nTwo.");
    let project = c.ok("GET", &prefix, OWNER, None)["projectId"].clone();
    let (page, nodes) = first_page(&scene);
    (s, server, prefix, project, page, nodes)
}

const USERS: [(&str, &str, &str); 3] = [
    ("sid", SID, "suggest"),
    ("ana", ANA, "edit"),
    ("vera", VERA, "review"),
];

/// The node's history names who added, voted on and accepted its
/// suggestion, and shows the list as text and votes.
fn history_names_each(c: &crate::http_support::Client, project: &Value, node: &str) {
    let history = c.ok(
        "GET",
        &format!(
            "/api/v1/projects/{}/history?node={}",
            project.as_str().unwrap(),
            node
        ),
        OWNER,
        None,
    );
    let said: Vec<(Value, Value)> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["label"].clone(), e["by"]["user"].clone()))
        .collect();
    assert_eq!(
        said[0],
        (json!("Suggestion accepted · page 1"), json!("ana"))
    );
    assert!(
        said.contains(&(json!("Suggestion added · page 1"), json!("sid"))),
        "{said:?}"
    );
    assert!(
        said.contains(&(json!("Vote on a suggestion · page 1"), json!("vera"))),
        "{said:?}"
    );

    let added = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["label"] == "Suggestion added · page 1")
        .unwrap();
    assert_eq!(added["changes"][0]["field"], "suggestions", "{added}");
    assert_eq!(
        added["changes"][0]["after"],
        json!(["Um. (0 votes)"]),
        "{added}"
    );
}

#[test]
fn a_suggester_proposes_an_editor_accepts_and_the_translation_names_both() {
    let (s, server, prefix, project, _, nodes) = with_a_page();
    let c = server.client();
    let list = |node: &str| format!("{prefix}/nodes/{node}/suggestions");
    let kind = |i: usize| {
        let scene = c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None);
        scene["scene"]["pages"][0]["nodes"][i]["kind"].clone()
    };
    let epoch = || c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None)["epoch"].clone();

    let um = c.ok(
        "POST",
        &list(&nodes[0]),
        SID,
        Some(json!({ "text": "Um." })),
    );
    assert_eq!(
        (&um["author"], &um["votes"]),
        (&json!("sid"), &json!(0)),
        "{um}"
    );
    c.ok(
        "POST",
        &list(&nodes[0]),
        ANA,
        Some(json!({ "text": "Uno." })),
    );
    assert_eq!(
        kind(0).get("translation"),
        None,
        "a suggestion changed the translation"
    );
    for (token, value) in [(ANA, 1), (VERA, 1), (SID, -1), (SID, 1)] {
        let vote = format!("{}/{}/vote", list(&nodes[0]), um["id"].as_str().unwrap());
        c.ok("POST", &vote, token, Some(json!({ "value": value })));
    }
    let open = c.ok("GET", &list(&nodes[0]), SID, None);
    let open: Vec<(Value, Value)> = open["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["text"].clone(), s["votes"].clone()))
        .collect();
    assert_eq!(
        open,
        vec![(json!("Um."), json!(3)), (json!("Uno."), json!(0))]
    );

    // The suggester may not accept; nothing changes.
    let accept = |id: &Value, node: &str| format!("{}/{}/accept", list(node), id.as_str().unwrap());
    let before = epoch();
    let (status, body) = c.call("POST", &accept(&um["id"], &nodes[0]), SID, None);
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "changing a project needs the edit role; sid has suggest"
    );
    assert_eq!(epoch(), before);

    // The editor accepts: signed by her, naming the suggester.
    let done = c.ok("POST", &accept(&um["id"], &nodes[0]), ANA, None);
    assert!(
        done["epoch"].as_u64().unwrap() > before.as_u64().unwrap(),
        "{done}"
    );
    let k = kind(0);
    assert_eq!(
        (&k["translation"], &k["state"]),
        (&json!("Um."), &json!("translated"))
    );
    assert_eq!(
        (&k["origin"]["user"], &k["origin"]["suggestedBy"]),
        (&json!("ana"), &json!("sid")),
        "{k}"
    );
    let open = c.ok("GET", &list(&nodes[0]), SID, None);
    assert_eq!(open["suggestions"].as_array().unwrap().len(), 1, "{open}");

    // The history names who did each.
    history_names_each(&c, &project, &nodes[0]);

    // Her undo takes the acceptance back: the suggestion is open again.
    c.ok("POST", &format!("{prefix}/history/undo"), ANA, None);
    assert_eq!(kind(0).get("translation"), None);
    let open = c.ok("GET", &list(&nodes[0]), SID, None);
    assert_eq!(open["suggestions"][0]["votes"], 3, "{open}");

    // The open ones outlive a restart.
    assert!(server.terminate().success());
    let server = team(&s, &USERS);
    let c = server.client();
    let session = c.ok(
        "PUT",
        "/api/v1/projects/current",
        OWNER,
        Some(json!({ "id": project })),
    );
    let prefix = format!("/api/v1/sessions/{}", session["id"].as_str().unwrap());
    let open = c.ok(
        "GET",
        &format!("{prefix}/nodes/{}/suggestions", nodes[0]),
        SID,
        None,
    );
    let texts: Vec<&Value> = open["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["text"])
        .collect();
    assert_eq!(texts, [&json!("Um."), &json!("Uno.")]);
    assert!(server.terminate().success());
}

/// A final segment's suggestion is a reviewer's to accept; bad input is
/// refused and changes nothing.
#[test]
fn a_final_segment_takes_a_suggestion_only_from_a_reviewer() {
    let (_s, server, prefix, _, page, nodes) = with_a_page();
    let c = server.client();
    let list = |node: &str| format!("{prefix}/nodes/{node}/suggestions");
    let accept = |id: &Value, node: &str| format!("{}/{}/accept", list(node), id.as_str().unwrap());
    let kind = |i: usize| {
        let scene = c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None);
        scene["scene"]["pages"][0]["nodes"][i]["kind"].clone()
    };
    let epoch = || c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None)["epoch"].clone();
    c.ok(
        "POST",
        &list(&nodes[0]),
        SID,
        Some(json!({ "text": "Um." })),
    );
    let uno = c.ok(
        "POST",
        &list(&nodes[0]),
        ANA,
        Some(json!({ "text": "Uno." })),
    );
    // A final segment's suggestion is a reviewer's to accept.
    let finalize = json!({ "type": "UpdateNode", "page": page, "id": nodes[1],
        "patch": { "kind": { "type": "text", "translation": "Dois.", "state": "final" } } });
    c.ok(
        "POST",
        &format!("{prefix}/history/apply"),
        VERA,
        Some(finalize),
    );
    let dos = c.ok(
        "POST",
        &list(&nodes[1]),
        SID,
        Some(json!({ "text": "Dos." })),
    );
    let (status, body) = c.call("POST", &accept(&dos["id"], &nodes[1]), ANA, None);
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "changing a final segment needs the review role; ana has edit"
    );
    c.ok("POST", &accept(&dos["id"], &nodes[1]), VERA, None);
    assert_eq!(kind(1)["translation"], "Dos.");

    // Bad input: refused, nothing changes.
    let before = epoch();
    for (path, body, status) in [
        (list(&nodes[0]), json!({ "text": " " }), 400),
        (list(&nodes[0]), json!({ "text": "Um." }), 409),
        (list(&nodes[0]), json!({ "words": "Um." }), 400),
        (
            format!("{}/{}/vote", list(&nodes[0]), uno["id"].as_str().unwrap()),
            json!({ "value": 5 }),
            400,
        ),
        (
            format!("{}/nope/vote", list(&nodes[0])),
            json!({ "value": 1 }),
            404,
        ),
        (
            list("0190d2a0-0000-7000-8000-000000000009"),
            json!({ "text": "x" }),
            404,
        ),
    ] {
        let (got, reply) = c.call("POST", &path, ANA, Some(body));
        assert_eq!(got, status, "{path}: {reply}");
    }
    assert_eq!(epoch(), before);

    assert!(server.terminate().success());
}
