//! OpenEnv's HTTP and WebSocket API, one base URL per environment (`/<env>`).

use std::sync::Arc;

use axum::Router;

use crate::hub::Hub;

/// The OpenEnv routes of every hosted environment.
pub fn routes(hub: &Arc<Hub>) -> Router<Arc<Hub>> {
    let _ = hub;
    Router::new()
}
