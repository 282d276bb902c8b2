package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// netConf is the plugin's configuration, from the network's conflist.
type netConf struct {
	CNIVersion string `json:"cniVersion"`
	Type       string `json:"type"`
	// Bridge is the bridge, in the node's network namespace, that the
	// pods' veths join; Subnet the pods' addresses, Gateway the bridge's.
	Bridge  string `json:"bridge"`
	Subnet  string `json:"subnet"`
	Gateway string `json:"gateway"`
	// DataDir holds the addresses given out, one file each.
	DataDir string `json:"dataDir"`
}

// cni is a CNI plugin (ADD, DEL, CHECK, VERSION). As "loopback" it brings
// up the pod's lo; otherwise it puts a veth between the pod's network
// namespace (its IFNAME, an address of Subnet, the Gateway as its route)
// and Bridge, in the namespace the plugin runs in: the node's, a network
// namespace of the test's own, so that nothing is added to the host's.
func cni() int {
	var conf netConf
	data, _ := io.ReadAll(os.Stdin)
	json.Unmarshal(data, &conf)
	version := conf.CNIVersion
	if version == "" {
		version = "1.0.0"
	}
	out, err := cniRun(&conf, os.Getenv("CNI_COMMAND"))
	if err != nil {
		json.NewEncoder(os.Stdout).Encode(map[string]any{"cniVersion": version, "code": 100, "msg": err.Error()})
		return 1
	}
	if out != nil {
		out["cniVersion"] = version
		json.NewEncoder(os.Stdout).Encode(out)
	}
	return 0
}

func cniRun(conf *netConf, command string) (map[string]any, error) {
	id, netns, ifname := os.Getenv("CNI_CONTAINERID"), os.Getenv("CNI_NETNS"), os.Getenv("CNI_IFNAME")
	in := func(args ...string) error { return ip(append([]string{"--net=" + netns, "ip"}, args...)...) }
	switch command {
	case "VERSION":
		return map[string]any{"supportedVersions": []string{"0.4.0", "1.0.0"}}, nil
	case "CHECK":
		return nil, nil
	case "ADD":
		if conf.Type == "loopback" {
			if err := in("link", "set", "lo", "up"); err != nil {
				return nil, err
			}
			return map[string]any{
				"interfaces": []map[string]any{{"name": "lo", "sandbox": netns}},
				"ips":        []map[string]any{{"address": "127.0.0.1/8", "interface": 0}},
			}, nil
		}
		addr, err := allocate(conf, id)
		if err != nil {
			return nil, err
		}
		prefix, _ := netip.ParsePrefix(conf.Subnet)
		host := hostVeth(id)
		steps := [][]string{
			{"--net=" + netns, "ip", "link", "add", ifname, "type", "veth", "peer", "name", host},
			{"--net=" + netns, "ip", "link", "set", host, "netns", strconv.Itoa(os.Getpid())},
			{"ip", "link", "set", host, "master", conf.Bridge, "up"},
			{"ip", "neigh", "flush", "to", addr.String(), "dev", conf.Bridge}, // a gone pod's entry
			{"--net=" + netns, "ip", "addr", "add", fmt.Sprintf("%s/%d", addr, prefix.Bits()), "dev", ifname},
			{"--net=" + netns, "ip", "link", "set", ifname, "up"},
			{"--net=" + netns, "ip", "route", "add", "default", "via", conf.Gateway},
		}
		for _, s := range steps {
			if err := ip(s...); err != nil {
				release(conf, id)
				ip("ip", "link", "del", host)
				return nil, err
			}
		}
		return map[string]any{
			"interfaces": []map[string]any{{"name": ifname, "sandbox": netns}},
			"ips":        []map[string]any{{"address": fmt.Sprintf("%s/%d", addr, prefix.Bits()), "gateway": conf.Gateway, "interface": 0}},
			"dns":        map[string]any{},
		}, nil
	case "DEL":
		if conf.Type == "loopback" {
			return nil, nil
		}
		release(conf, id)
		ip("ip", "link", "del", hostVeth(id)) // gone with its namespace already, often
		return nil, nil
	}
	return nil, fmt.Errorf("unknown CNI_COMMAND %q", command)
}

// ip runs args: "ip ..." in this namespace, or "--net=PATH ip ..." in
// another through nsenter.
func ip(args ...string) error {
	name := args[0]
	if strings.HasPrefix(name, "--net=") {
		args = append([]string{name}, args[1:]...)
		name = "nsenter"
	} else {
		args = args[1:]
	}
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// hostVeth names the node's end of a pod's veth (at most 15 bytes).
func hostVeth(id string) string {
	if len(id) > 12 {
		id = id[:12]
	}
	return "ve" + id
}

// allocate gives the container id an address of the subnet, other than
// the gateway's, under a lock: a file named after each address taken. It
// takes the next free address after the last one given (in "last"), so
// that an address comes back only after the whole subnet: a pod's address
// reused at once is unreachable from the node for a while (its neighbour
// entry still names the gone pod's interface).
func allocate(conf *netConf, id string) (netip.Addr, error) {
	unlock, err := lock(conf.DataDir)
	if err != nil {
		return netip.Addr{}, err
	}
	defer unlock()
	prefix, err := netip.ParsePrefix(conf.Subnet)
	if err != nil {
		return netip.Addr{}, err
	}
	gw, _ := netip.ParseAddr(conf.Gateway)
	first := prefix.Addr().Next()
	last, err := netip.ParseAddr(readString(filepath.Join(conf.DataDir, "last")))
	if err != nil || !prefix.Contains(last) {
		last = first
	}
	a := last
	for range 1 << (32 - prefix.Bits()) {
		if a = a.Next(); !prefix.Contains(a) || !prefix.Contains(a.Next()) {
			a = first // the network's and the broadcast address are no pod's
		}
		if a == gw {
			continue
		}
		f, err := os.OpenFile(filepath.Join(conf.DataDir, "ip-"+a.String()), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return netip.Addr{}, err
		}
		f.WriteString(id)
		if err := f.Close(); err != nil {
			return netip.Addr{}, err
		}
		return a, os.WriteFile(filepath.Join(conf.DataDir, "last"), []byte(a.String()), 0o600)
	}
	return netip.Addr{}, errors.New("no address left in " + conf.Subnet)
}

// readString returns the file's contents, or "".
func readString(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// release frees the addresses given to the container id.
func release(conf *netConf, id string) {
	unlock, err := lock(conf.DataDir)
	if err != nil {
		return
	}
	defer unlock()
	files, _ := filepath.Glob(filepath.Join(conf.DataDir, "ip-*"))
	for _, f := range files {
		if data, _ := os.ReadFile(f); string(data) == id {
			os.Remove(f)
		}
	}
}

// lock takes the data folder's lock.
func lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
