package serve

import (
	"fmt"
	"os"
	"path/filepath"
)

// MPSState says whether the CUDA MPS control daemon looks active.
type MPSState struct {
	Active  bool   `json:"active"`
	PipeDir string `json:"pipe_dir"`
	Detail  string `json:"detail"`
}

// CheckMPS looks for MPS's control pipe: $CUDA_MPS_PIPE_DIRECTORY (else
// /tmp/nvidia-mps) holding "control", a socket or a named pipe, which
// nvidia-cuda-mps-control -d creates.
func CheckMPS() MPSState {
	dir := os.Getenv("CUDA_MPS_PIPE_DIRECTORY")
	if dir == "" {
		dir = "/tmp/nvidia-mps"
	}
	return checkMPSDir(dir)
}

func checkMPSDir(dir string) MPSState {
	s := MPSState{PipeDir: dir}
	fi, err := os.Stat(filepath.Join(dir, "control"))
	switch {
	case err != nil:
		s.Detail = fmt.Sprintf("no MPS control pipe in %s", dir)
	case fi.Mode()&(os.ModeSocket|os.ModeNamedPipe) == 0:
		s.Detail = fmt.Sprintf("%s/control is not a socket or pipe", dir)
	default:
		s.Active = true
		s.Detail = fmt.Sprintf("MPS control pipe %s/control present", dir)
	}
	return s
}

// Warning is the message to print at start, "" when MPS is active.
func (s MPSState) Warning() string {
	if s.Active {
		return ""
	}
	return s.Detail + ": MPS is not active, so kernels of different processes time-slice instead of running at once; start it with `nvidia-cuda-mps-control -d` (see docs/SERVE.md)"
}
