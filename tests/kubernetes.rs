//! The Kubernetes manifests build with kustomize and validate against the schemas.
