//! The end-to-end tests, one target: each module drives the real binary (`mcpgym`) the way one
//! kind of user does, through the shared harness in [`common`].

mod common;

mod bench;
mod cluster;
mod container;
mod control_plane;
mod desktop_families;
mod desktop_mcp;
mod desktop_tasks;
mod escape;
mod eval;
mod exports;
mod jupyter_mcp;
mod kubernetes;
mod legacy_sessions;
mod manifests;
mod new;
mod openenv;
mod ors;
mod python_env;
mod replay;
mod restart;
mod runtime;
mod sandbox_e2b_sdk;
mod sandbox_e2b_suites;
mod sandbox_http;
mod tiers;
mod viewer;
mod wordle_http;
mod wordle_stdio;
