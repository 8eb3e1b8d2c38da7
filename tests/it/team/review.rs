//! Review states are a reviewer's (spec 10, "A team on one project"):
//! the five roles in their order, an editor refused `reviewed` and
//! `final` and any change to a final segment (403 naming the role,
//! nothing changed), a reviewer allowed, a suggester refused every op,
//! and a file an editor imports brought down to `translated`.

use serde_json::{Value, json};

use crate::harness::Sandbox;
use crate::http_support::{Binary, first_page};

pub(super) const OWNER: &str = "owner-token-aa91";
pub(super) const SID: &str = "sid-token-5b20";
pub(super) const ANA: &str = "ana-token-c3e7";
pub(super) const VERA: &str = "vera-token-9d14";

fn state(page: &str, node: &str, state: &str, translation: Option<&str>) -> Value {
    let mut kind = json!({ "type": "text", "state": state });
    if let Some(t) = translation {
        kind["translation"] = json!(t);
    }
    json!({ "type": "UpdateNode", "page": page, "id": node, "patch": { "kind": kind } })
}

/// A server whose users are the owner (`server.token`) and `users` (name,
/// token, role).
pub(super) fn team(s: &Sandbox, users: &[(&str, &str, &str)]) -> Binary {
    let mut toml = format!("[server]\ntoken = \"{OWNER}\"\n");
    for (name, token, role) in users {
        toml.push_str(&format!(
            "\n[[server.users]]\nname = \"{name}\"\ntoken = \"{token}\"\nrole = \"{role}\"\n"
        ));
    }
    let config = s.write("team.toml", &toml);
    Binary::start(
        s,
        &[
            "--config",
            config.to_str().unwrap(),
            "--headless",
            "--port",
            "0",
        ],
        &[],
    )
}

#[test]
fn review_states_are_a_reviewers_and_an_editor_is_told_so() {
    let s = Sandbox::new();
    let server = team(
        &s,
        &[
            ("sid", SID, "suggest"),
            ("ana", ANA, "edit"),
            ("vera", VERA, "review"),
        ],
    );
    let c = server.client();
    let prefix = c.new_project(OWNER, "Review");
    let scene = c.text_page(&prefix, ANA, "One.\n\nTwo.\n\nThree.");
    let (page, nodes) = first_page(&scene);
    let apply = |token: &str, op: Value| {
        c.call("POST", &format!("{prefix}/history/apply"), token, Some(op))
    };
    let epoch = || c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None)["epoch"].clone();
    let node_state = |i: usize| {
        let scene = c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None);
        let kind = &scene["scene"]["pages"][0]["nodes"][i]["kind"];
        (kind["translation"].clone(), kind["state"].clone())
    };

    // Each is told their role.
    for (token, role) in [(SID, "suggest"), (ANA, "edit"), (VERA, "review")] {
        let meta = c.ok("GET", "/api/v1/meta", token, None);
        assert_eq!(meta["role"], role, "{meta}");
    }

    // The editor translates, but may not mark it reviewed or final.
    let (status, body) = apply(ANA, state(&page, &nodes[0], "translated", Some("Um.")));
    assert_eq!(status, 200, "{body}");
    for (wanted, what) in [("reviewed", "reviewed"), ("final", "final")] {
        let before = epoch();
        let (status, body) = apply(ANA, state(&page, &nodes[0], wanted, None));
        assert_eq!(status, 403, "{body}");
        assert_eq!(body["error"]["code"], "forbidden_role", "{body}");
        assert_eq!(
            body["error"]["message"],
            format!("marking a segment {what} needs the review role; ana has edit")
        );
        assert_eq!(epoch(), before, "a refused review changed the project");
    }
    // Nor inside a batch: the whole batch is refused.
    let batch = json!({ "type": "Batch", "ops": [
        state(&page, &nodes[1], "translated", Some("Dois.")),
        state(&page, &nodes[0], "reviewed", None),
    ]});
    let before = epoch();
    let (status, _) = apply(ANA, batch);
    assert_eq!(status, 403);
    assert_eq!(epoch(), before);

    // The reviewer may; then the final segment is the reviewer's alone.
    let (status, body) = apply(VERA, state(&page, &nodes[0], "final", None));
    assert_eq!(status, 200, "{body}");
    let before = epoch();
    let (status, body) = apply(ANA, state(&page, &nodes[0], "translated", Some("Uno.")));
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "changing a final segment needs the review role; ana has edit"
    );
    assert_eq!(epoch(), before);
    assert_eq!(node_state(0), (json!("Um."), json!("final")));
    let (status, body) = apply(VERA, state(&page, &nodes[0], "translated", Some("Uno.")));
    assert_eq!(status, 200, "{body}");
    assert_eq!(node_state(0), (json!("Uno."), json!("translated")));

    // The suggester changes nothing (suggestions are theirs, not ops).
    let (status, body) = apply(SID, state(&page, &nodes[2], "translated", Some("Três.")));
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["error"]["message"],
        "changing a project needs the edit role; sid has suggest"
    );

    // A file the editor imports brings its states down to translated; the
    // reviewer's keeps them.
    let (status, exported) = c.call(
        "POST",
        &format!("{prefix}/export"),
        OWNER,
        Some(json!({ "format": "xliff" })),
    );
    assert_eq!(status, 200);
    let exported = exported.as_str().unwrap().to_owned();
    let finalised = |node: &str, target: &str| {
        let at = exported.find(&format!("<unit id=\"n{node}\"")).unwrap();
        let (head, unit) = exported.split_at(at);
        let unit = unit
            .replacen("state=\"initial\"", "state=\"final\"", 1)
            .replacen(
                "</source>",
                &format!("</source><target>{target}</target>"),
                1,
            );
        format!("{head}{unit}")
    };
    for (token, node, target, kept) in
        [(ANA, 2, "Três.", "translated"), (VERA, 1, "Dois.", "final")]
    {
        let content = finalised(&nodes[node], target);
        let (status, report) = c.call(
            "POST",
            &format!("{prefix}/import"),
            token,
            Some(json!({ "format": "xliff", "content": content })),
        );
        assert_eq!(status, 200, "{report}");
        assert_eq!(report["updated"], 1, "{report}");
        assert_eq!(node_state(node), (json!(target), json!(kept)));
    }
}

/// Over HTTP: each person's undo takes back their own step, says so when
/// there is none (`epoch: null`, a message), and is refused with `409
/// undo_conflict` naming who changed the same text since.
#[test]
fn each_persons_undo_is_their_own_over_http() {
    let s = Sandbox::new();
    let server = team(&s, &[("ana", ANA, "edit"), ("vera", VERA, "review")]);
    let c = server.client();
    let prefix = c.new_project(OWNER, "Undo");
    let scene = c.text_page(&prefix, OWNER, "One.\n\nTwo.");
    let page = scene["scene"]["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let node = |i: usize| {
        scene["scene"]["pages"][0]["nodes"][i]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let translate = |token: &str, i: usize, text: &str| {
        let op = state(&page, &node(i), "translated", Some(text));
        c.ok("POST", &format!("{prefix}/history/apply"), token, Some(op));
    };
    let undo = |token: &str| c.call("POST", &format!("{prefix}/history/undo"), token, None);
    let epoch = || c.ok("GET", &format!("{prefix}/scene.json"), OWNER, None)["epoch"].clone();

    translate(ANA, 0, "Um.");
    translate(VERA, 1, "Dois.");
    let (status, undone) = undo(ANA);
    assert_eq!((status, &undone["by"]), (200, &json!("ana")), "{undone}");
    let before = epoch();
    let (status, nothing) = undo(ANA);
    assert_eq!(status, 200, "{nothing}");
    assert_eq!(
        nothing,
        json!({ "epoch": null, "ops": 0, "message": "nothing of yours to undo" })
    );
    assert_eq!(epoch(), before);

    translate(ANA, 1, "Dos.");
    let before = epoch();
    let (status, refused) = undo(VERA);
    assert_eq!(status, 409, "{refused}");
    assert_eq!(refused["error"]["code"], "undo_conflict", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("ana has changed"), "{message}");
    assert_eq!(epoch(), before);
}

/// The history says who did what: each person's edits with their name,
/// an undo as such, filters by person, node and time, paging by cursor,
/// and bad queries refused by name.
#[test]
fn the_history_names_who_did_what() {
    let s = Sandbox::new();
    let server = team(&s, &[("ana", ANA, "edit"), ("vera", VERA, "review")]);
    let c = server.client();
    let prefix = c.new_project(OWNER, "History");
    let scene = c.text_page(&prefix, OWNER, "One.\n\nTwo.");
    let session = c.ok("GET", &prefix, OWNER, None);
    let project = session["projectId"].as_str().unwrap().to_owned();
    let page = scene["scene"]["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let node = |i: usize| {
        scene["scene"]["pages"][0]["nodes"][i]["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let apply = |token: &str, op: Value| {
        c.ok("POST", &format!("{prefix}/history/apply"), token, Some(op));
    };
    apply(ANA, state(&page, &node(0), "translated", Some("Um")));
    apply(VERA, state(&page, &node(1), "translated", Some("Dois.")));
    c.ok("POST", &format!("{prefix}/history/undo"), ANA, None);
    apply(ANA, state(&page, &node(0), "translated", Some("Um.")));
    apply(VERA, state(&page, &node(0), "reviewed", None));

    let history = |query: &str| {
        c.call(
            "GET",
            &format!("/api/v1/projects/{project}/history{query}"),
            ANA,
            None,
        )
    };
    let (status, all) = history("");
    assert_eq!(status, 200, "{all}");
    let entries = all["entries"].as_array().unwrap();
    // Newest first: vera's review, ana's edit, ana's undo, vera's and
    // ana's edits, the owner's page.
    let who: Vec<_> = entries
        .iter()
        .map(|e| (e["by"]["by"].as_str().unwrap(), e["by"]["user"].as_str()))
        .collect();
    assert_eq!(
        who,
        [
            ("human", Some("vera")),
            ("human", Some("ana")),
            ("human", Some("ana")),
            ("human", Some("vera")),
            ("human", Some("ana")),
            ("human", Some("owner")),
        ],
        "{all}"
    );
    assert!(entries[2]["label"].as_str().unwrap().starts_with("undo: "));
    assert_eq!(all["next"], Value::Null);
    let review = &entries[0]["changes"];
    assert!(
        review
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["field"] == "state"
                && c["before"] == "translated"
                && c["after"] == "reviewed"
                && c["node"] == node(0).as_str()
                && c["page"] == page.as_str()),
        "{review}"
    );
    assert!(entries[0]["at"].as_str().unwrap().ends_with('Z'));

    // Filters: a person, a node; pages of one, by cursor.
    let (_, anas) = history("?user=ana");
    assert_eq!(anas["entries"].as_array().unwrap().len(), 3, "{anas}");
    let (_, second) = history(&format!("?node={}", node(1)));
    assert_eq!(second["entries"].as_array().unwrap().len(), 1, "{second}");
    let (_, first_page) = history("?limit=2");
    assert_eq!(first_page["entries"].as_array().unwrap().len(), 2);
    let cursor = first_page["next"].as_str().unwrap().to_owned();
    let (_, rest) = history(&format!("?limit=2&cursor={cursor}"));
    assert_eq!(rest["entries"][0], entries[2], "{rest}");
    let (_, future) = history("?since=2999-01-01T00:00:00Z");
    assert_eq!(future["entries"], json!([]));

    // Bad queries name the parameter; an unknown project is 404.
    for (query, named) in [
        ("?limit=0", "limit"),
        ("?since=yesterday", "since"),
        ("?colour=red", "colour"),
        ("?node=x", "node"),
    ] {
        let (status, body) = history(query);
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains(named),
            "{query}: {body}"
        );
    }
    let (status, _) = c.call(
        "GET",
        "/api/v1/projects/01890000-0000-7000-8000-000000000000/history",
        ANA,
        None,
    );
    assert_eq!(status, 404);
}
