// Command e2e is the helper of test/k8s/e2e.sh, the end-to-end test of
// `ceiling k8s --apply` on a real single-node cluster: the parts of that
// cluster which are not Kubernetes' own, each a subcommand of this one
// static binary.
//
//	e2e certs DIR            a CA, the API server's certificate, a service-account key pair,
//	                         an admin token and a kubeconfig
//	e2e image OUT.tar ...    a FROM-scratch image in `docker save`'s format, for `ctr images import`
//	e2e pause                the pod sandbox's process: waits for SIGTERM
//	e2e target               the target pod: answers every request and counts them
//	e2e dns                  a stand-in for the cluster's DNS: pod and Service names from EndpointSlices
//	e2e figures RESULT.json  the figures the script checks, on one line
//	e2e-cni (argv[0])        a CNI plugin: a veth from the pod's network namespace into a bridge
//
// None of it is ceiling: it stands in for what a cluster has and this
// machine has not (a registry, CoreDNS, a network plugin).
package main
