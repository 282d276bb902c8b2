package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if strings.HasSuffix(filepath.Base(os.Args[0]), "cni") || filepath.Base(os.Args[0]) == "loopback" {
		os.Exit(cni())
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: e2e certs|image|pause|target|dns|figures ...")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "certs":
		err = certs(args)
	case "image":
		err = image(args)
	case "pause":
		pause()
	case "target":
		err = target(args)
	case "dns":
		err = dns(args)
	case "figures":
		err = figures(args)
	default:
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
