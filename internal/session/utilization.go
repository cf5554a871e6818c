package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/client"
	"github.com/perfgate/perfgate/internal/modelfile"
	"github.com/perfgate/perfgate/internal/utilization"
)

// modelLister is a Sender that lists the models with what the server says
// of each (*client.Client): the meta MBU and MFU can take the model's size
// from.
type modelLister interface {
	Models(ctx context.Context) ([]client.Model, error)
}

// utilizationBasis finds what MBU and MFU rest on, once, at the first
// start: the config's utilization section, its model file's header, the
// engine's /v1/models meta and the GPUs identified. It says what it found
// and what it assumed, or why there will be no MBU or MFU.
func (s *session) utilizationBasis(ctx context.Context) {
	u := s.cfg.Utilization
	var file *modelfile.Shape
	if u.ModelFile != "" {
		shape, err := modelfile.Read(resolvePath(s.cfg.Dir, u.ModelFile))
		if err != nil {
			s.detail("warning: utilization.model_file: %v", err)
		} else {
			file = &shape
			for _, n := range shape.Notes {
				s.detail("note: %s: %s", shape.Source, n)
			}
		}
	}
	var meta *utilization.Meta
	if ml, ok := s.client.(modelLister); ok {
		if models, err := ml.Models(ctx); err == nil {
			for _, m := range models {
				if m.ID != s.cfg.Target.Model && len(models) > 1 {
					continue
				}
				parsed, err := utilization.ParseMeta(m.Meta)
				if err != nil {
					s.detail("warning: %s: the server's /v1/models: %v", m.ID, s.headers.Redact(err.Error()))
				}
				if parsed != nil && parsed.Simulated && s.server.Engine != "perfgate-sim" {
					// Only perfgate's simulator declares what it stands for;
					// another server saying so would set its own yardstick.
					s.detail("warning: %s: the server's /v1/models calls it simulated, and it is not perfgate's simulator: its declared GPU and peaks are ignored", m.ID)
					parsed.Simulated, parsed.GPU, parsed.PeakBandwidthGBs, parsed.PeakTFLOPS = false, "", 0, 0
				}
				meta = parsed
				break
			}
		}
	}
	given := utilization.Given{Params: u.Params, BytesPerWeight: u.BytesPerWeight, Layers: u.Layers, KVHeads: u.KVHeads,
		HeadDim: u.HeadDim, KVBytes: u.KVBytes, GPU: u.GPU, GPUs: u.GPUs, PeakBandwidthGBs: u.PeakBandwidthGBs, PeakTFLOPS: u.PeakTFLOPS}
	b, why := utilization.Basis(given, file, meta, s.gpus)
	s.basis = b
	if b == nil {
		s.detail("MBU and MFU: not computed: %s", why)
		return
	}
	what := fmt.Sprintf("%.3g parameters, %.3g GB of weights, %.0f KiB of KV cache a token; %d × %s at %.0f GB/s and %.0f TFLOPS",
		b.Params, b.WeightBytes/1e9, b.KVBytesPerToken/1024, b.GPUs, b.GPU, b.PeakBandwidthGBs, b.PeakTFLOPS)
	if b.Simulated {
		what += " (simulated: what perfgate's simulator declares it stands for, not a GPU's figures)"
	}
	s.detail("MBU and MFU from %s", what)
	if len(b.Assumed) > 0 {
		s.detail("MBU and MFU assume %s", strings.Join(b.Assumed, "; "))
	}
}

// resolvePath is path against the config's directory, as the config's
// other files are.
func resolvePath(dir, path string) string {
	if filepath.IsAbs(path) || dir == "" {
		return path
	}
	return filepath.Join(dir, path)
}
