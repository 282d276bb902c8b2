// Package k8s is `ceiling k8s`: the Kubernetes objects of a run by agents,
// built with the API's own Go types, printed as YAML for kubectl, or
// created and followed to the result.
//
// Manifests builds, from Options: a ConfigMap with the plan, a Secret with
// the agents' token, a headless Service, an Indexed Job of agents (pod i
// is NAME-agents-i.NAME-agents, so the coordinator knows every agent's
// name before any pod exists), and a coordinator Job that runs
// `ceiling run` (or find) with --agents and prints result.json into its
// log between results.LogBegin and results.LogEnd. Write prints them for
// `kubectl apply -f -`. Apply creates them, copies the coordinator's log to
// a writer, reads the result from that log and deletes what it created.
// Flags are the command's flags, which build Options.
//
// What it does not do: run anything itself (the agent and the coordinator
// are `ceiling agent` and `ceiling run --agents`), build or push the image
// (the repository's Dockerfile builds it), or carry files other than the
// plan: a plan naming a data file, a process, a cgroup or a command on the
// machine ceiling k8s runs on is refused. The tests run against
// client-go's fake clientset, which stores objects and nothing more: no
// scheduler, no Job controller, no kubelet, no DNS. They check what is
// sent and how Apply reacts to the states a cluster would report, not
// that a cluster runs it; docs/distributed.md says how to try it on one.
//
// Concurrency: Apply runs in the calling goroutine and starts none; the
// other functions are pure.
package k8s
