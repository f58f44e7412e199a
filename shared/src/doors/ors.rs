//! The Open Reward Standard's HTTP API, at the server's root.

use std::sync::Arc;

use axum::Router;

use crate::hub::Hub;

/// The ORS routes.
pub fn routes(hub: &Arc<Hub>) -> Router<Arc<Hub>> {
    let _ = hub;
    Router::new()
}
