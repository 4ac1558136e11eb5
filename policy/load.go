package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Load reads the .rego files of a set at dir in fsys: dir itself when it is
// a file, else every .rego file under it, but not conftest's unit tests
// (*_test.rego), in path order. Paths are fsys's, as errors will name them.
// A repository's tree is read through an os.Root's FS, so a symlink does
// not leave it.
func Load(fsys fs.FS, dir string) ([]File, error) {
	dir = path.Clean(strings.TrimPrefix(dir, "/"))
	st, err := fs.Stat(fsys, dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("policy path %s does not exist", dir)
		}
		return nil, err
	}
	if !st.IsDir() {
		text, err := readBounded(fsys, dir, st.Size())
		if err != nil {
			return nil, err
		}
		return []File{{Path: dir, Text: text}}, nil
	}
	var files []File
	total := int64(0)
	err = fs.WalkDir(fsys, dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() || !strings.HasSuffix(p, ".rego") || strings.HasSuffix(p, "_test.rego") || !e.Type().IsRegular() {
			return nil
		}
		if len(files) >= MaxFiles {
			return fmt.Errorf("policy path %s has more than %d .rego files", dir, MaxFiles)
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > MaxPolicyBytes {
			return fmt.Errorf("the .rego files of %s weigh more than %d bytes", dir, MaxPolicyBytes)
		}
		text, err := readBounded(fsys, p, info.Size())
		if err != nil {
			return err
		}
		files = append(files, File{Path: p, Text: text})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("policy path %s has no .rego file", dir)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

func readBounded(fsys fs.FS, p string, size int64) ([]byte, error) {
	if size > MaxPolicyBytes {
		return nil, fmt.Errorf("%s weighs more than %d bytes", p, MaxPolicyBytes)
	}
	return fs.ReadFile(fsys, p)
}
