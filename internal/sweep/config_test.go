package sweep

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfigs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Config
	}{
		{"seed", "2@1/512m 2@2/1g 4@4/2g 8@8/4g", []Config{
			{2, 1, 512}, {2, 2, 1024}, {4, 4, 2048}, {8, 8, 4096},
		}},
		{"units and fractions", "4@0.5/256Mi 1@1.5/1.5Gi 1@0.25/1.5g", []Config{
			{4, 0.5, 256}, {1, 1.5, 1536}, {1, 0.25, 1536},
		}},
		{"commas and spaces", " 1@1/512m,2@1/512m ,\t3@1/512m\n", []Config{
			{1, 1, 512}, {2, 1, 512}, {3, 1, 512},
		}},
		{"order kept", "4@2/1g 1@1/512m", []Config{{4, 2, 1024}, {1, 1, 512}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfigs(tt.in)
			if err != nil {
				t.Fatalf("ParseConfigs(%q) = %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseConfigs(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseConfigsErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "  ", `configs: none given: want items such as "2@1/512m 4@2/1g" (workers@cpus/memory)`},
		{"no at", "2/1/512m", `config 1 "2/1/512m": want workers@cpus/memory, such as 2@1/512m`},
		{"no slash", "2@1", `config 1 "2@1": want workers@cpus/memory, such as 2@1/512m`},
		{"zero workers", "0@1/512m", `config 1 "0@1/512m": workers "0": want a whole number of at least 1`},
		{"fractional workers", "1.5@1/512m", `config 1 "1.5@1/512m": workers "1.5": want a whole number of at least 1`},
		{"zero cpus", "1@0/512m", `config 1 "1@0/512m": cpus "0": want a number of cores above 0, such as 0.5 or 2`},
		{"nan cpus", "1@NaN/512m", `config 1 "1@NaN/512m": cpus "NaN": want a number of cores above 0, such as 0.5 or 2`},
		{"no unit", "1@1/512", `config 1 "1@1/512": memory "512": want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi`},
		{"kubernetes M", "1@1/512M", `config 1 "1@1/512M": memory "512M": want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi`},
		{"zero memory", "1@1/0g", `config 1 "1@1/0g": memory "0g": want a size above 0, such as 512m or 1Gi`},
		{"part of a MiB", "1@1/0.5m", `config 1 "1@1/0.5m": memory "0.5m": want a whole number of MiB up to 1 PiB (0.5 MiB)`},
		{"everything wrong", "x@y/z", `config 1 "x@y/z": workers "x": want a whole number of at least 1; ` +
			`cpus "y": want a number of cores above 0, such as 0.5 or 2; ` +
			`memory "z": want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi`},
		{"repeat", "2@1/512m 4@1/1g 2@1/512Mi", `config 3 "2@1/512Mi": repeats config 1 (2w / 1c / 512Mi)`},
		{"all reported", "2@1/512m 2@x/1g 4@4/2 2@1/512m", `config 2 "2@x/1g": cpus "x": want a number of cores above 0, such as 0.5 or 2` + "\n" +
			`config 3 "4@4/2": memory "2": want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi` + "\n" +
			`config 4 "2@1/512m": repeats config 1 (2w / 1c / 512Mi)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfigs(tt.in)
			if err == nil {
				t.Fatalf("ParseConfigs(%q) = %v, want error %q", tt.in, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("ParseConfigs(%q) error =\n%s\nwant\n%s", tt.in, err, tt.want)
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		c        Config
		name, id string
	}{
		{Config{2, 1, 512}, "2w / 1c / 512Mi", "2w-1c-512Mi"},
		{Config{2, 1, 1024}, "2w / 1c / 1Gi", "2w-1c-1Gi"},
		{Config{1, 0.5, 1536}, "1w / 0.5c / 1536Mi", "1w-0.5c-1536Mi"},
		{Config{8, 8, 4096}, "8w / 8c / 4Gi", "8w-8c-4Gi"},
		{Config{1, 1.25, 256}, "1w / 1.25c / 256Mi", "1w-1.25c-256Mi"},
	}
	for _, tt := range tests {
		if got := tt.c.Name(); got != tt.name {
			t.Errorf("%+v.Name() = %q, want %q", tt.c, got, tt.name)
		}
		if got := tt.c.ID(); got != tt.id {
			t.Errorf("%+v.ID() = %q, want %q", tt.c, got, tt.id)
		}
	}
}

func TestMatrixOrder(t *testing.T) {
	m := Matrix{Workers: []int{1, 2}, CPUs: []float64{0.5, 2}, Memory: []string{"512Mi", "1g"}}
	got, err := m.Configs()
	if err != nil {
		t.Fatalf("Configs() = %v", err)
	}
	want := []Config{
		{1, 0.5, 512}, {1, 0.5, 1024}, {1, 2, 512}, {1, 2, 1024},
		{2, 0.5, 512}, {2, 0.5, 1024}, {2, 2, 512}, {2, 2, 1024},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Configs() (-want +got):\n%s", diff)
	}
	again, _ := m.Configs()
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("Configs() is not stable (-first +second):\n%s", diff)
	}
}

func TestMatrixErrors(t *testing.T) {
	tests := []struct {
		name string
		m    Matrix
		want string
	}{
		{"empty", Matrix{}, "matrix: workers: empty: want at least one worker count\n" +
			"matrix: cpus: empty: want at least one CPU quota\n" +
			"matrix: memory: empty: want at least one memory limit"},
		{"bad values", Matrix{Workers: []int{1, 0}, CPUs: []float64{-1}, Memory: []string{"1g", "2x"}},
			"matrix: workers[1] 0: want at least 1\n" +
				"matrix: cpus[0] -1: want a number of cores above 0, such as 0.5 or 2\n" +
				`matrix: memory[1]: memory "2x": want a size with a unit: m or Mi (MiB), g or Gi (GiB), such as 512m or 1Gi`},
		{"repeats", Matrix{Workers: []int{2, 2}, CPUs: []float64{1, 0.5, 1}, Memory: []string{"1g", "1024Mi"}},
			"matrix: workers[1] 2: repeats workers[0]\n" +
				"matrix: cpus[2] 1: repeats cpus[0]\n" +
				`matrix: memory[1] "1024Mi": repeats 1Gi`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.Configs()
			if err == nil {
				t.Fatalf("%+v.Configs() = %v, want error", tt.m, got)
			}
			if err.Error() != tt.want {
				t.Errorf("%+v.Configs() error =\n%s\nwant\n%s", tt.m, err, tt.want)
			}
		})
	}
}

// FuzzParseConfigs checks that ParseConfigs never panics, that what it
// accepts is valid, and that the configurations' IDs read back as the same
// shapes.
func FuzzParseConfigs(f *testing.F) {
	for _, s := range []string{"2@1/512m 2@2/1g 4@0.5/256Mi", "1@1.5/1.5Gi", "x@y/z", "", "1@1e3/1g", "1@0.001/1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		configs, err := ParseConfigs(s)
		if err != nil {
			return
		}
		var ids []string
		for _, c := range configs {
			if c.Workers < 1 || c.CPUs <= 0 || c.MemoryMB < 1 {
				t.Fatalf("ParseConfigs(%q) accepted %+v", s, c)
			}
			id := strings.NewReplacer("w-", "@", "c-", "/").Replace(c.ID())
			ids = append(ids, id)
		}
		again, err := ParseConfigs(strings.Join(ids, " "))
		if err != nil {
			t.Fatalf("ParseConfigs(%q) = %v, but its IDs %v read back as %v", s, configs, ids, err)
		}
		if diff := cmp.Diff(configs, again); diff != "" {
			t.Fatalf("IDs of ParseConfigs(%q) read back differently (-first +again):\n%s", s, diff)
		}
	})
}
