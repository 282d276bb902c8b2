// Package k8s is `ceiling k8s`: the Kubernetes objects of a run by agents,
// built with the API's own Go types, printed as YAML for kubectl, or
// created and followed to the result.
//
// Manifests builds, from Options: a Secret with the plan (and the
// coordinator's flags that hold a secret), a Secret with the agents' token, a headless Service, a NetworkPolicy that admits only
// the coordinator's pod to the agents (unless left out), an Indexed Job of
// agents (pod i
// is NAME-agents-i.NAME-agents, so the coordinator knows every agent's
// name before any pod exists; each runs `ceiling agent --once`, so the Job
// completes when the run is over; one to which no coordinator came stops
// after --idle-timeout), and a coordinator Job that runs `ceiling run` (or
// find) with --agents and prints result.json into its log between
// results.LogBegin and results.LogEnd. Both Jobs end by a
// deadline (activeDeadlineSeconds) and are deleted a while after they
// finish (ttlSecondsAfterFinished). Write prints them for
// `kubectl apply -f -`. Apply creates them, copies the coordinator's log to
// a writer, fetches the result the coordinator holds (or reads it from
// that log) and deletes what it created.
// Flags are the command's flags; Flags.Run is the whole command but for
// the table and the exit code, which cli owns.
//
// Apply talks to the cluster through Cluster, a handful of operations. In
// the binary, restCluster implements it with client-go's REST client for
// the core/v1 (with the pods' logs and proxy), batch/v1 and
// networking.k8s.io/v1 APIs only (client-go's
// rest and clientcmd, with a scheme that registers those groups), not
// client-go's typed
// clientset, whose scheme registers every group of the API: with it,
// ceiling k8s added 51 MB to the binary; with restCluster, 14 MB.
//
// What it does not do: run anything itself (the agent and the coordinator
// are `ceiling agent` and `ceiling run --agents`), build or push the image
// (the repository's Dockerfile builds it), or carry files other than the
// plan: a plan naming a data file, a process, a cgroup or a command on the
// machine ceiling k8s runs on is refused, and so is a loopback target,
// which in a pod is the pod itself.
//
// The coordinator also keeps result.json after the run (--hold-result),
// served on results.HeldPort with its size and SHA-256: Apply fetches it through the API server's proxy to the pod (the pods/proxy
// subresource) as soon as the log holds the whole result, checks it and
// releases it, so that a result of any size comes back whole; a log is
// rotated by the kubelet (10 MiB by default) and dies with the Job. The
// log's own copy, checked against the SHA-256 line after it, is the
// fallback. A log that cannot be followed is said at once.
//
// Testing: test/k8s/e2e.sh runs Apply on a real single-node cluster
// (Kubernetes built from source, containerd, a kubelet; a stand-in for the
// cluster's DNS and a minimal network plugin, no policy enforcement) and
// checks its results against a target that counts what it receives. The
// package's tests use client-go's fake clientset (through an adapter in a
// test file, so it is linked into the test binary only), which stores
// objects and nothing more: no scheduler, no Job controller, no kubelet,
// no DNS; the tests play those parts. restCluster's tests use an HTTP
// handler on loopback that answers the few paths it asks for as the API
// does. The printed objects are decoded back strictly with the API's
// types (a field unknown where it stands is an error), and both pods are
// evaluated against the restricted Pod Security Standard with
// k8s.io/pod-security-admission's own checks, a module of the tests only.
//
// Concurrency: Apply and Flags.Run run in the calling goroutine and start
// none of their own; the only goroutines behind them are net/http's, for
// the connections to the API server. The other functions are pure.
package k8s
