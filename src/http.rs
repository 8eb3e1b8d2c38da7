//! Headless HTTP frontend: the `/api/v1` routes and the SSE event stream
//! (axum). Built in the headless issue.
