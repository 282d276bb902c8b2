module github.com/ceiling-dev/ceiling/test/k8s

go 1.26.8

require golang.org/x/net v0.62.0
