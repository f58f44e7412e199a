//! The container image's steps, run in a chroot.
