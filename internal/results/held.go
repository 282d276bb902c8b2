package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// A coordinator in a Kubernetes pod writes result.json into a folder that
// dies with the pod, and its log is rotated and expires. With
// --hold-result it keeps the file after the run, served on HeldPort (the
// agent package's Hold), until a client has fetched it and released it:
// `ceiling k8s --apply` through the Kubernetes API server's proxy to the
// pod, a person with `kubectl port-forward` and curl. Its size and SHA-256
// come first, so that the client can tell the whole file from a part.
const (
	// HeldPort is the port a coordinator holds its result on.
	HeldPort = 7071
	// HeldPath serves the file (GET) and releases it (DELETE);
	// HeldSumPath serves its size and SHA-256 (Held, as JSON);
	// HeldReleasePath releases it too, to a GET: through the API
	// server's proxy, a user may be allowed to get (pods/proxy) and not
	// to delete.
	HeldPath        = "/v1/result"
	HeldSumPath     = "/v1/result/sum"
	HeldReleasePath = "/v1/result/release"
	// HeldTokenHeader carries the agents' token to the held result: the
	// Authorization header is the Kubernetes API server's, which its proxy
	// does not pass on.
	HeldTokenHeader = "Ceiling-Token"
	// HeldLine starts the line a coordinator logs once its result is held.
	HeldLine = "ceiling: holding result.json"
)

// Held is what GET HeldSumPath answers: the held file's size and its
// SHA-256, in hexadecimal.
type Held struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// HeldOf describes data, a result file.
func HeldOf(data []byte) Held {
	sum := sha256.Sum256(data)
	return Held{Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// Check returns an error unless data is the file h describes.
func (h Held) Check(data []byte) error {
	if got := HeldOf(data); got != h {
		return fmt.Errorf("the result fetched is not the one held: %d bytes with SHA-256 %s, want %d bytes with SHA-256 %s", got.Bytes, got.SHA256, h.Bytes, h.SHA256)
	}
	return nil
}
