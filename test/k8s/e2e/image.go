package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"strings"
	"time"
)

// image writes an image FROM scratch, in the format of `docker save`
// (which `ctr images import` reads), with one layer holding the files
// given as SRC:DST (each executable, at /DST), its entry point the
// comma-separated ENTRYPOINT and its user the nonroot one of distroless
// images (65532), as the repository's Dockerfile has it.
//
//	e2e image OUT.tar NAME:TAG ENTRYPOINT SRC:DST...
func image(args []string) error {
	if len(args) < 4 {
		return errors.New("usage: e2e image OUT.tar NAME:TAG ENTRYPOINT SRC:DST [SRC:DST]")
	}
	out, tag, entry := args[0], args[1], strings.Split(args[2], ",")
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	epoch := time.Unix(0, 0)
	for _, f := range args[3:] {
		src, dst, ok := strings.Cut(f, ":")
		if !ok {
			return errors.New("want SRC:DST, not " + f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: strings.TrimPrefix(dst, "/"), Mode: 0o755, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer.Bytes())
	layerID := hex.EncodeToString(layerSum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      epoch.UTC().Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": entry, "User": "65532:65532"},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{tag}, "Layers": []string{layerID + "/layer.tar"}}})
	if err != nil {
		return err
	}
	var img bytes.Buffer
	iw := tar.NewWriter(&img)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerID + "/layer.tar", layer.Bytes()}, {"manifest.json", manifest}} {
		if err := iw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := iw.Write(e.data); err != nil {
			return err
		}
	}
	if err := iw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, img.Bytes(), 0o644)
}
