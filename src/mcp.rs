//! MCP frontend: the workspace tools over streamable HTTP at `/mcp` and over
//! stdio (rmcp). Built in the MCP issue.
