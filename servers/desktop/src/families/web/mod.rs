//! The web families.

use super::Family;

/// The families of this folder, in the order task lists show them.
pub(super) const FAMILIES: &[Family] = &[];
