//! Placeholder: filled in by the openenv door work.

mod common;

#[allow(unused_imports)]
use common::*;
