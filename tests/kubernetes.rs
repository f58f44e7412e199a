//! The Kubernetes manifests build with kustomize and validate against the schemas.
//!
//! `manifests/kubernetes/validate` renders base and every overlay and checks each object
//! against the strict Kubernetes schemas (its tools come from PyPI and npm, cached under
//! target/k8s-tools). These tests run it as CI and users do, then read what it rendered and
//! check what the schemas cannot: that each replica names itself, probes its health, gets the
//! token from the Secret, has time to shut down, and that the router and the routes agree.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kubernetes() -> PathBuf {
    root().join("manifests/kubernetes")
}

/// A fresh folder under target/k8s-tests (inside the repository, so a kustomization there can
/// name the base by a relative path, as kustomize requires), removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root()
            .join("target/k8s-tests")
            .join(format!("{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the validate script: (success, stderr).
fn validate(args: &[&str]) -> (bool, String) {
    let output = Command::new(kubernetes().join("validate"))
        .args(args)
        .output()
        .expect("run manifests/kubernetes/validate");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Base and every overlay, rendered and validated: {build: [objects]}.
fn rendered() -> serde_json::Map<String, Value> {
    let dir = TempDir::new("rendered");
    let out = dir.0.join("rendered.json");
    let (ok, stderr) = validate(&["--json", out.to_str().unwrap()]);
    assert!(ok, "validate failed:\n{stderr}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    json.as_object().unwrap().clone()
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name}"))
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The value after `flag` in a container's args.
fn flag<'a>(container: &'a Value, flag: &str) -> Option<&'a str> {
    let args = strings(&container["args"]);
    let at = args.iter().position(|a| *a == flag)?;
    args.get(at + 1).copied()
}

fn env<'a>(container: &'a Value, name: &str) -> &'a Value {
    container["env"]
        .as_array()
        .and_then(|e| e.iter().find(|v| v["name"] == name))
        .unwrap_or_else(|| panic!("{} has no env {name}", container["name"]))
}

fn assert_token_from_secret(container: &Value, name: &str, what: &str) {
    let reference = &env(container, name)["valueFrom"]["secretKeyRef"];
    assert_eq!(reference["name"], "mcpgym-token", "{what}: {name}");
    assert_eq!(reference["key"], "token", "{what}: {name}");
}

#[test]
fn manifests_build_and_validate() {
    let builds = rendered();
    let names: Vec<&str> = builds.keys().map(String::as_str).collect();
    for expected in [
        "base",
        "overlays/wordle",
        "overlays/jupyter",
        "overlays/desktop",
    ] {
        assert!(names.contains(&expected), "{expected} built: {names:?}");
    }

    for (build, objects) in &builds {
        let objects = objects.as_array().unwrap();
        let secret = find(objects, "Secret", "mcpgym-token");
        assert!(
            secret.pointer("/data/token").is_some(),
            "{build}: token key"
        );

        // Every workload: limits and requests, no privilege, probes.
        for workload in objects
            .iter()
            .filter(|o| o["kind"] == "StatefulSet" || o["kind"] == "Deployment")
        {
            let what = format!("{build}: {}", workload["metadata"]["name"]);
            let pod = &workload["spec"]["template"]["spec"];
            for container in pod["containers"].as_array().unwrap() {
                for key in ["requests", "limits"] {
                    for resource in ["cpu", "memory"] {
                        assert!(
                            container["resources"][key][resource].is_string(),
                            "{what}: {key}.{resource}"
                        );
                    }
                }
                let security = &container["securityContext"];
                assert_eq!(security["allowPrivilegeEscalation"], false, "{what}");
                assert_eq!(
                    strings(&security["capabilities"]["drop"]),
                    ["ALL"],
                    "{what}"
                );
                assert!(
                    container["readinessProbe"]["httpGet"]["path"].is_string(),
                    "{what}"
                );
                assert!(
                    container["livenessProbe"]["httpGet"]["path"].is_string(),
                    "{what}"
                );
            }
            assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{what}");
        }

        // The replicas: named from the pod, token from the Secret, health on /healthz, time
        // to shut down, found by the router through the headless Service.
        for set in objects.iter().filter(|o| o["kind"] == "StatefulSet") {
            let name = set["metadata"]["name"].as_str().unwrap();
            let what = format!("{build}: StatefulSet {name}");
            let pod = &set["spec"]["template"]["spec"];
            let container = &pod["containers"][0];
            assert_eq!(set["spec"]["podManagementPolicy"], "Parallel", "{what}");
            let headless = find(
                objects,
                "Service",
                set["spec"]["serviceName"].as_str().unwrap(),
            );
            assert_eq!(headless["spec"]["clusterIP"], "None", "{what}");
            assert_eq!(
                headless["spec"]["publishNotReadyAddresses"], false,
                "{what}"
            );
            let shutdown: u64 = flag(container, "--shutdown-timeout")
                .unwrap_or_else(|| panic!("{what}: --shutdown-timeout"))
                .parse()
                .unwrap();
            let grace = pod["terminationGracePeriodSeconds"].as_u64().unwrap();
            assert!(
                grace >= shutdown + 10,
                "{what}: grace {grace}s leaves cleanup time after --shutdown-timeout {shutdown}"
            );
            let health = if name == "mcpgym-sandbox" {
                "/health"
            } else {
                "/healthz"
            };
            assert_eq!(
                container["readinessProbe"]["httpGet"]["path"], health,
                "{what}"
            );
            assert_eq!(
                container["livenessProbe"]["httpGet"]["path"], health,
                "{what}"
            );
            assert_token_from_secret(container, "MCPGYM_TOKEN", &what);
            // A pod that runs jails (any but Wordle's) lets them mount their own /proc, which
            // Kubernetes allows only in a pod with its own user namespace.
            let jails = container["args"][0] != "wordle";
            if jails {
                assert_eq!(pod["hostUsers"], false, "{what}");
                assert_eq!(
                    container["securityContext"]["procMount"], "Unmasked",
                    "{what}"
                );
            } else {
                assert_ne!(
                    container["securityContext"]["procMount"], "Unmasked",
                    "{what}"
                );
            }
            if name == "mcpgym" {
                assert_eq!(
                    env(container, "MCPGYM_REPLICA")["valueFrom"]["fieldRef"]["fieldPath"],
                    "metadata.name",
                    "{what}"
                );
                let annotations = &set["spec"]["template"]["metadata"]["annotations"];
                assert_eq!(annotations["prometheus.io/scrape"], "true", "{what}");
                assert_eq!(annotations["prometheus.io/path"], "/metrics", "{what}");
                assert_eq!(
                    flag(container, "--http"),
                    Some(
                        format!(
                            "0.0.0.0:{}",
                            annotations["prometheus.io/port"].as_str().unwrap()
                        )
                        .as_str()
                    ),
                    "{what}"
                );
                assert_eq!(container["readinessProbe"]["httpGet"]["port"], "http");
                assert_eq!(container["ports"][0]["containerPort"], 8080, "{what}");
            }
        }

        // The router: its template includes the shared files, reads the namespace from the
        // downward API, and the Ingress and the HTTPRoute send everything to it.
        let router = find(objects, "Deployment", "mcpgym-router");
        let nginx = &router["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            env(nginx, "POD_NAMESPACE")["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.namespace"
        );
        let rendered_dir = env(nginx, "NGINX_ENVSUBST_OUTPUT_DIR")["value"]
            .as_str()
            .unwrap();
        assert_eq!(
            flag(nginx, "-c"),
            Some(format!("{rendered_dir}/nginx.conf").as_str())
        );
        let config_map = router["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|v| v["configMap"]["name"].as_str())
            .unwrap();
        let config = objects
            .iter()
            .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["name"] == config_map)
            .unwrap_or_else(|| panic!("{build}: the router's ConfigMap {config_map}"));
        let main = config["data"]["nginx.conf.template"].as_str().unwrap();
        for needle in [
            "include routing.conf;",
            "include locations.conf;",
            "upstream mcpgym_any",
            "server mcpgym:8080;",
            "map $mcpgym_owner $mcpgym_owner_address",
            "$mcpgym_owner.mcpgym-replicas.${POD_NAMESPACE}.svc.${CLUSTER_DOMAIN}:8080",
            "resolver ",
            "listen 8080;",
        ] {
            assert!(main.contains(needle), "{build}: nginx.conf has {needle}");
        }
        let routing = config["data"]["routing.conf.template"].as_str().unwrap();
        for variable in ["$mcpgym_owner ", "$mcpgym_target", "$mcpgym_owner_address"] {
            assert!(routing.contains(variable), "routing.conf uses {variable}");
        }
        assert!(
            config["data"]["locations.conf.template"]
                .as_str()
                .unwrap()
                .contains("$mcpgym_target"),
        );

        let service = find(objects, "Service", "mcpgym-router");
        let port = &service["spec"]["ports"][0];
        let ingress = find(objects, "Ingress", "mcpgym");
        assert_eq!(ingress["spec"]["ingressClassName"], "nginx");
        let backend = &ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"];
        assert_eq!(backend["name"], "mcpgym-router");
        assert_eq!(backend["port"]["name"], port["name"]);
        let annotations = &ingress["metadata"]["annotations"];
        assert_eq!(
            annotations["nginx.ingress.kubernetes.io/proxy-buffering"],
            "off"
        );
        assert_eq!(
            annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"],
            "3600"
        );
        // The HTTPRoute's checker does not refuse unknown fields: pin them here.
        let route = find(objects, "HTTPRoute", "mcpgym");
        let mut spec_keys: Vec<&String> = route["spec"].as_object().unwrap().keys().collect();
        spec_keys.sort();
        assert_eq!(spec_keys, ["parentRefs", "rules"]);
        assert_eq!(
            route["spec"]["parentRefs"],
            serde_json::json!([{"name": "mcpgym"}])
        );
        let rule = route["spec"]["rules"][0].as_object().unwrap();
        assert!(
            rule.keys()
                .all(|k| ["matches", "backendRefs", "timeouts"].contains(&k.as_str()))
        );
        assert_eq!(
            rule["backendRefs"],
            serde_json::json!([{"name": "mcpgym-router", "port": port["port"]}])
        );
    }

    // Each overlay runs its environment with its capacity.
    let replicas = |build: &str, name: &str| -> &Value {
        find(builds[build].as_array().unwrap(), "StatefulSet", name)
    };
    for (build, env_name, max) in [
        ("base", "serve", "1000"),
        ("overlays/wordle", "wordle", "10000"),
        ("overlays/jupyter", "jupyter", "64"),
        ("overlays/desktop", "desktop", "48"),
    ] {
        let container = &replicas(build, "mcpgym")["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["command"],
            serde_json::json!(["mcpgym"]),
            "{build}"
        );
        assert_eq!(strings(&container["args"])[0], env_name, "{build}");
        assert_eq!(flag(container, "--max-episodes"), Some(max), "{build}");
    }

    // Jupyter: the replicas list exactly the sandbox hosts there are, with their token.
    let jupyter =
        &replicas("overlays/jupyter", "mcpgym")["spec"]["template"]["spec"]["containers"][0];
    let hosts = replicas("overlays/jupyter", "mcpgym-sandbox");
    let count = hosts["spec"]["replicas"].as_u64().unwrap();
    let expected: Vec<String> = (0..count)
        .map(|i| format!("http://mcpgym-sandbox-{i}.mcpgym-sandbox:8081"))
        .collect();
    assert_eq!(
        flag(jupyter, "--sandbox"),
        Some(expected.join(",").as_str())
    );
    assert_token_from_secret(jupyter, "MCPGYM_SANDBOX_TOKEN", "jupyter");
    let sandbox = &hosts["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(strings(&sandbox["args"])[0], "sandbox");
    assert_eq!(flag(sandbox, "--http"), Some("0.0.0.0:8081"));
    assert_eq!(flag(sandbox, "--max-sandboxes"), Some("64"));
    // 64 sandboxes at the planned ~100 MiB each fit the request.
    assert_eq!(sandbox["resources"]["requests"]["memory"], "8Gi");

    // Desktop: Chromium's /dev/shm in memory.
    let desktop = &replicas("overlays/desktop", "mcpgym")["spec"]["template"]["spec"];
    let shm_volume = desktop["containers"][0]["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == "/dev/shm")
        .expect("desktop mounts /dev/shm")["name"]
        .clone();
    let volume = desktop["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == shm_volume)
        .unwrap();
    assert_eq!(volume["emptyDir"]["medium"], "Memory");

    // Jails need mcpgym's seccomp and AppArmor profiles; Wordle runs no jail.
    for (build, profile) in [
        ("overlays/desktop", "Localhost"),
        ("overlays/jupyter", "Localhost"),
        ("overlays/wordle", "RuntimeDefault"),
    ] {
        let pod = &replicas(build, "mcpgym")["spec"]["template"]["spec"];
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"], profile,
            "{build}"
        );
        assert_eq!(
            pod["securityContext"]["appArmorProfile"]["type"], profile,
            "{build}"
        );
    }
    let sandbox_pod = &hosts["spec"]["template"]["spec"]["securityContext"];
    assert_eq!(
        sandbox_pod["seccompProfile"]["localhostProfile"],
        "mcpgym/seccomp.json"
    );
    assert_eq!(sandbox_pod["appArmorProfile"]["localhostProfile"], "mcpgym");
}

/// A kustomization in `dir` (a TempDir) that uses the real base with `patches` applied.
fn broken_overlay(dir: &Path, patches: &str) {
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ../../../manifests/kubernetes/base\npatches:\n{patches}"
        ),
    )
    .unwrap();
}

#[test]
fn a_broken_manifest_is_named_with_its_error() {
    let dir = TempDir::new("broken");
    broken_overlay(
        &dir.0,
        r#"  - target: {kind: StatefulSet, name: mcpgym}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/readinessProbe/httpGet/pathh
        value: /healthz
      - op: replace
        path: /spec/template/spec/terminationGracePeriodSeconds
        value: thirty
  - target: {kind: HTTPRoute, name: mcpgym}
    patch: |-
      - op: replace
        path: /spec/rules/0/backendRefs/0/port
        value: eighty
"#,
    );
    let (ok, stderr) = validate(&[dir.0.to_str().unwrap()]);
    assert!(!ok, "a broken manifest must fail:\n{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let named = |needles: &[&str]| {
        lines
            .iter()
            .any(|line| needles.iter().all(|n| line.contains(n)))
    };
    let folder = dir.0.to_str().unwrap();
    assert!(
        named(&[
            folder,
            "StatefulSet/mcpgym",
            "httpGet",
            "'pathh' was unexpected"
        ]),
        "the unknown field, with its object:\n{stderr}"
    );
    assert!(
        named(&[
            folder,
            "StatefulSet/mcpgym",
            "terminationGracePeriodSeconds",
            "'thirty' is not of type"
        ]),
        "the wrong type, with its object:\n{stderr}"
    );
    assert!(
        named(&[
            folder,
            "HTTPRoute/mcpgym",
            "backendRefs.0.port",
            "must be integer"
        ]),
        "the HTTPRoute's error:\n{stderr}"
    );

    // A kustomization that does not build is named too.
    let unbuildable = TempDir::new("unbuildable");
    std::fs::write(
        unbuildable.0.join("kustomization.yaml"),
        "resources:\n  - missing.yaml\n",
    )
    .unwrap();
    let (ok, stderr) = validate(&[unbuildable.0.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        stderr.contains("kustomize build failed") && stderr.contains("missing.yaml"),
        "{stderr}"
    );
}

/// The router's configuration, as the base renders it, loads in nginx once the pod's
/// namespace is filled in (the cluster's names replaced by loopback ones nginx can resolve
/// here).
#[test]
fn router_configuration_loads_in_nginx() {
    let builds = rendered();
    let objects = builds["base"].as_array().unwrap();
    let config = objects
        .iter()
        .find(|o| {
            o["kind"] == "ConfigMap"
                && o["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("mcpgym-router")
        })
        .unwrap();
    let dir = TempDir::new("nginx");
    for (key, text) in config["data"].as_object().unwrap() {
        let text = text
            .as_str()
            .unwrap()
            .replace("${POD_NAMESPACE}", "mcpgym-test")
            .replace("${CLUSTER_DOMAIN}", "cluster.local");
        assert!(
            !text.contains("${"),
            "{key}: only the two variables are templated"
        );
        let text = if key == "nginx.conf.template" {
            assert!(text.contains("mcpgym-replicas.mcpgym-test.svc.cluster.local:8080"));
            text.replace("server mcpgym:8080;", "server 127.0.0.1:9;")
                .replace(
                    "resolver kube-dns.kube-system.svc.cluster.local",
                    "resolver 127.0.0.1",
                )
                .replace("/tmp/", &format!("{}/", dir.0.display()))
        } else {
            text
        };
        std::fs::write(dir.0.join(key.trim_end_matches(".template")), text).unwrap();
    }
    let nginx = ["/usr/sbin/nginx", "nginx"]
        .into_iter()
        .find(|n| Command::new(n).arg("-v").output().is_ok())
        .expect("nginx (installed by .ci/setup)");
    let output = Command::new(nginx)
        .args(["-t", "-e", "/dev/stderr", "-c"])
        .arg(dir.0.join("nginx.conf"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "nginx -t:\n{stderr}");
    assert!(stderr.contains("test is successful"), "{stderr}");
}
