package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// ErrChartTooLarge is a chart, with its dependencies, over the bounds of
// what Strata loads.
var ErrChartTooLarge = errors.New("chart too large")

// The bounds of one chart with all its dependencies, vendored as
// directories or as archives inside archives. Helm bounds each archive
// (100 MiB decompressed) and each file (5 MiB), but not a chart whose
// charts/ holds a thousand archives, each of which may hold more.
const (
	maxChartBytes   = 32 << 20
	maxChartFiles   = 10000
	maxArchiveDepth = 8
)

// budget is what is left of the bounds as a chart is read.
type budget struct {
	bytes int64
	files int
}

func newBudget() *budget { return &budget{bytes: maxChartBytes, files: maxChartFiles} }

// take counts the file name of size bytes against the budget.
func (b *budget) take(name string, size int64) error {
	b.files--
	b.bytes -= size
	switch {
	case b.files < 0:
		return fmt.Errorf("%s: %w: the chart and its dependencies hold more than %d files", name, ErrChartTooLarge, maxChartFiles)
	case b.bytes < 0:
		return fmt.Errorf("%s: %w: the chart and its dependencies hold more than %d bytes, decompressed", name, ErrChartTooLarge, maxChartBytes)
	}
	return nil
}

// subchartArchive says whether Helm's loader unpacks the file name, of
// content data, as a dependency: charts/NAME.tgz of a chart.
func subchartArchive(name string, data []byte) bool {
	base := path.Base(name)
	return path.Base(path.Dir(name)) == "charts" && path.Ext(base) == ".tgz" && !strings.ContainsAny(base[:1], "_.") &&
		len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b
}

// measure decompresses the chart archive r, named name, counting each of
// its files, and each file of the archives in it, against b, without
// keeping them: Helm's loader reads it after, when it is within bounds.
func (b *budget) measure(name string, r io.Reader, depth int) error {
	if depth > maxArchiveDepth {
		return fmt.Errorf("%s: %w: archives nested more than %d deep", name, ErrChartTooLarge, maxArchiveDepth)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if hd.Typeflag != tar.TypeReg {
			continue // Helm's loader skips them too
		}
		entry := path.Join(name, hd.Name)
		if err := b.take(entry, hd.Size); err != nil {
			return err
		}
		if hd.Size > loader.MaxDecompressedFileSize {
			return fmt.Errorf("%s: %w: larger than Helm's maximum file size %d", entry, ErrChartTooLarge, loader.MaxDecompressedFileSize)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return fmt.Errorf("%s: %w", entry, err)
		}
		if subchartArchive(hd.Name, data) {
			if err := b.measure(entry, bytes.NewReader(data), depth+1); err != nil {
				return err
			}
		}
	}
}
