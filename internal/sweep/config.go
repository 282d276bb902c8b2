package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Config is one shape of the target: how many workers it runs and the CPU
// and memory it may use.
type Config struct {
	// Workers is the target's worker count (processes or threads, as the
	// target reads it from {{.workers}}). At least 1.
	Workers int
	// CPUs is the CPU quota in cores: 0.5 is half of one core's time, 2 is
	// two cores' time. Zero means no CPU limit.
	CPUs float64
	// MemoryMB is the memory limit in MiB (2^20 bytes). Zero means no
	// memory limit.
	MemoryMB int
}

// Name returns the shape as the sweep table writes it: "2w / 1c / 512Mi",
// "1w / 0.5c / 1Gi". Memory that is a whole number of GiB is written in
// Gi, anything else in Mi.
func (c Config) Name() string {
	return fmt.Sprintf("%dw / %sc / %s", c.Workers, formatCPUs(c.CPUs), formatMemory(c.MemoryMB))
}

// ID returns the shape as a name that is safe in file and cgroup names and
// stable from one sweep to the next: "2w-1c-512Mi", "1w-0.5c-1Gi".
func (c Config) ID() string {
	return fmt.Sprintf("%dw-%sc-%s", c.Workers, formatCPUs(c.CPUs), formatMemory(c.MemoryMB))
}

// formatCPUs writes a CPU quota in its shortest exact form (1, 0.5, 1.25).
func formatCPUs(cpus float64) string { return strconv.FormatFloat(cpus, 'f', -1, 64) }

// formatMemory writes MiB as "1Gi" when it is a whole number of GiB, else
// as "512Mi".
func formatMemory(mb int) string {
	if mb > 0 && mb%1024 == 0 {
		return strconv.Itoa(mb/1024) + "Gi"
	}
	return strconv.Itoa(mb) + "Mi"
}

// memoryText writes a memory size in MiB for a sentence: "4 MiB", "1 GiB".
func memoryText(mb int) string {
	if mb > 0 && mb%1024 == 0 {
		return strconv.Itoa(mb/1024) + " GiB"
	}
	return strconv.Itoa(mb) + " MiB"
}

// ParseConfigs reads configurations written as the seed's --configs flag:
// items separated by spaces (or commas), each W@C/M: workers, CPUs (a
// decimal, such as 0.5), and memory with a unit, m or Mi for MiB, g or Gi
// for GiB ("2@1/512m 2@2/1g 4@0.5/256Mi"; 1.5g is 1536 MiB). Every bad item
// is reported, each named with its position and what is wrong with it, and
// an item repeating an earlier shape is refused: a shape is run once.
func ParseConfigs(s string) ([]Config, error) {
	items := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
	if len(items) == 0 {
		return nil, errors.New("configs: none given: want items such as \"2@1/512m 4@2/1g\" (workers@cpus/memory)")
	}
	var configs []Config
	var errs []error
	seen := map[Config]int{}
	for i, item := range items {
		c, err := parseConfig(item)
		if err != nil {
			errs = append(errs, fmt.Errorf("config %d %q: %w", i+1, item, err))
			continue
		}
		if first, ok := seen[c]; ok {
			errs = append(errs, fmt.Errorf("config %d %q: repeats config %d (%s)", i+1, item, first, c.Name()))
			continue
		}
		seen[c] = i + 1
		configs = append(configs, c)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return configs, nil
}

// parseConfig reads one W@C/M item.
func parseConfig(item string) (Config, error) {
	w, rest, ok1 := strings.Cut(item, "@")
	cpus, mem, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return Config{}, errors.New("want workers@cpus/memory, such as 2@1/512m")
	}
	var errs []error
	workers, err := parseWorkers(w)
	if err != nil {
		errs = append(errs, err)
	}
	c, err := parseCPUs(cpus)
	if err != nil {
		errs = append(errs, err)
	}
	mb, err := ParseMemory(mem)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Config{}, joinInline(errs)
	}
	return Config{Workers: workers, CPUs: c, MemoryMB: mb}, nil
}

// joinInline joins errors with "; ", keeping one item's problems on its line.
func joinInline(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// parseWorkers reads a worker count: a whole number of at least 1.
func parseWorkers(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("workers %q: want a whole number of at least 1", s)
	}
	return n, nil
}

// parseCPUs reads a CPU quota in cores: a finite decimal above 0 and at
// most 1024 (no machine this runs on has more).
func parseCPUs(s string) (float64, error) {
	c, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(c) || math.IsInf(c, 0) || c <= 0 || c > 1024 {
		return 0, fmt.Errorf("cpus %q: want a number of cores above 0, such as 0.5 or 2", s)
	}
	return c, nil
}

// ParseMemory reads a memory size with its unit, m or Mi for MiB and g or
// Gi for GiB ("512m", "256Mi", "1g", "1.5Gi"), and returns it in MiB. The
// size must come to a whole number of MiB above zero, at most 1 PiB.
func ParseMemory(s string) (int, error) {
	num, scale := s, 0.0
	for _, u := range []struct {
		suffix string
		mib    float64
	}{{"Mi", 1}, {"Gi", 1024}, {"m", 1}, {"g", 1024}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, scale = n, u.mib
			break
		}
	}
	if scale == 0 {
		return 0, fmt.Errorf("memory %q: want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("memory %q: want a size above 0, such as 512m or 1Gi", s)
	}
	mb := v * scale
	if mb != math.Trunc(mb) || mb > 1<<30 {
		return 0, fmt.Errorf("memory %q: want a whole number of MiB up to 1 PiB (%g MiB)", s, mb)
	}
	return int(mb), nil
}

// Matrix is the configurations as a product of axes, as a sweep file's
// `matrix: {workers: [1, 2], cpus: [1, 2], memory: [512Mi, 1Gi]}` writes it.
type Matrix struct {
	// Workers are the worker counts, each at least 1.
	Workers []int `yaml:"workers"`
	// CPUs are the CPU quotas in cores, each above 0.
	CPUs []float64 `yaml:"cpus"`
	// Memory are the memory limits with their units ("512Mi", "1g"), as
	// ParseMemory reads them.
	Memory []string `yaml:"memory"`
}

// Configs expands the matrix into every combination, in a stable order:
// workers outermost, then CPUs, then memory, each axis in the order it is
// written (as nested loops with memory innermost). Every problem is
// reported at once: an empty axis, a bad value (named by axis and
// position), a value repeated on its axis.
func (m Matrix) Configs() ([]Config, error) {
	var errs []error
	if len(m.Workers) == 0 {
		errs = append(errs, errors.New("matrix: workers: empty: want at least one worker count"))
	}
	if len(m.CPUs) == 0 {
		errs = append(errs, errors.New("matrix: cpus: empty: want at least one CPU quota"))
	}
	if len(m.Memory) == 0 {
		errs = append(errs, errors.New("matrix: memory: empty: want at least one memory limit"))
	}
	for i, w := range m.Workers {
		if w < 1 {
			errs = append(errs, fmt.Errorf("matrix: workers[%d] %d: want at least 1", i, w))
		} else if j := slices.Index(m.Workers[:i], w); j >= 0 {
			errs = append(errs, fmt.Errorf("matrix: workers[%d] %d: repeats workers[%d]", i, w, j))
		}
	}
	for i, c := range m.CPUs {
		if math.IsNaN(c) || math.IsInf(c, 0) || c <= 0 || c > 1024 {
			errs = append(errs, fmt.Errorf("matrix: cpus[%d] %g: want a number of cores above 0, such as 0.5 or 2", i, c))
		} else if j := slices.Index(m.CPUs[:i], c); j >= 0 {
			errs = append(errs, fmt.Errorf("matrix: cpus[%d] %g: repeats cpus[%d]", i, c, j))
		}
	}
	mem := make([]int, 0, len(m.Memory))
	for i, s := range m.Memory {
		mb, err := ParseMemory(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("matrix: memory[%d]: %w", i, err))
			continue
		}
		if j := slices.Index(mem, mb); j >= 0 {
			errs = append(errs, fmt.Errorf("matrix: memory[%d] %q: repeats %s", i, s, formatMemory(mb)))
			continue
		}
		mem = append(mem, mb)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	configs := make([]Config, 0, len(m.Workers)*len(m.CPUs)*len(mem))
	for _, w := range m.Workers {
		for _, c := range m.CPUs {
			for _, mb := range mem {
				configs = append(configs, Config{Workers: w, CPUs: c, MemoryMB: mb})
			}
		}
	}
	return configs, nil
}
