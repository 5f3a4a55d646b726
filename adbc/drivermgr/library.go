package drivermgr

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/purearrow/cdevice/internal/regular"
)

// What a library file says of itself, read in pure Go from its headers
// (ELF, PE, Mach-O) whatever the platform: the platform it was built for,
// and the symbols it exports. For errors that say what a file that failed
// to load is, and which entry points it has.

// libraryInfo is what a library's headers say.
type libraryInfo struct {
	format  string   // "ELF", "PE", "Mach-O"
	goos    string   // what the format serves: linux (ELF), windows, darwin
	goarch  string   // "" where the machine is none Go knows
	machine string   // the header's name for the machine
	exports []string // its exported function symbols, where readable
}

// readLibrary reads the headers of the regular file at path; ok is false
// for a file of no format it knows, no file, or a bare name (the system's
// loader searched for it: a file of that name here is not what it found).
func readLibrary(path string) (info libraryInfo, ok bool) {
	if !strings.ContainsAny(path, `/\`) {
		return info, false
	}
	f, err := regular.Open(path)
	if err != nil {
		return info, false
	}
	defer f.Close()
	if e, err := elf.NewFile(f); err == nil {
		return elfInfo(e), true
	}
	if p, err := pe.NewFile(f); err == nil {
		return peInfo(p, f), true
	}
	if m, err := macho.NewFile(f); err == nil {
		return machoInfo(m), true
	}
	if fat, err := macho.NewFatFile(f); err == nil {
		info := libraryInfo{format: "Mach-O universal", goos: "darwin"}
		for _, a := range fat.Arches {
			if i := machoInfo(a.File); i.goarch == runtime.GOARCH || info.goarch == "" {
				info.goarch, info.machine, info.exports = i.goarch, i.machine, i.exports
			}
		}
		return info, true
	}
	return info, false
}

func elfInfo(f *elf.File) libraryInfo {
	arch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_386: "386", elf.EM_AARCH64: "arm64", elf.EM_ARM: "arm",
		elf.EM_RISCV: "riscv64", elf.EM_S390: "s390x", elf.EM_LOONGARCH: "loong64", elf.EM_MIPS: "mips"}[f.Machine]
	if f.Machine == elf.EM_PPC64 {
		arch = "ppc64"
		if f.Data == elf.ELFDATA2LSB {
			arch = "ppc64le"
		}
	}
	info := libraryInfo{format: "ELF", goos: "linux", goarch: arch, machine: f.Machine.String()}
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) != elf.STB_LOCAL {
			info.exports = append(info.exports, s.Name)
		}
	}
	return info
}

func machoInfo(f *macho.File) libraryInfo {
	arch := map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.Cpu386: "386", macho.CpuArm64: "arm64", macho.CpuArm: "arm"}[f.Cpu]
	info := libraryInfo{format: "Mach-O", goos: "darwin", goarch: arch, machine: f.Cpu.String()}
	if f.Symtab != nil {
		for _, s := range f.Symtab.Syms {
			const nExt, nTypeMask, nSect = 0x01, 0x0e, 0x0e
			if s.Type&nExt != 0 && s.Type&nTypeMask == nSect {
				info.exports = append(info.exports, strings.TrimPrefix(s.Name, "_"))
			}
		}
	}
	return info
}

func peInfo(f *pe.File, r io.ReaderAt) libraryInfo {
	arch := map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_I386: "386",
		pe.IMAGE_FILE_MACHINE_ARM64: "arm64", pe.IMAGE_FILE_MACHINE_ARMNT: "arm"}[f.Machine]
	info := libraryInfo{format: "PE", goos: "windows", goarch: arch, machine: fmt.Sprintf("machine 0x%x", f.Machine)}
	info.exports = peExports(f, r)
	return info
}

// peExports reads the names of a PE file's export directory (debug/pe
// reads no exports).
func peExports(f *pe.File, r io.ReaderAt) []string {
	var dir pe.DataDirectory
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		if h.NumberOfRvaAndSizes > 0 {
			dir = h.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
		}
	case *pe.OptionalHeader32:
		if h.NumberOfRvaAndSizes > 0 {
			dir = h.DataDirectory[pe.IMAGE_DIRECTORY_ENTRY_EXPORT]
		}
	}
	if dir.Size == 0 {
		return nil
	}
	// at reads up to n bytes at a relative virtual address, within its
	// section.
	at := func(rva, n uint32) []byte {
		for _, s := range f.Sections {
			if rva >= s.VirtualAddress && rva < s.VirtualAddress+s.Size {
				b := make([]byte, min(n, s.VirtualAddress+s.Size-rva))
				if _, err := s.ReadAt(b, int64(rva-s.VirtualAddress)); err == nil {
					return b
				}
			}
		}
		return nil
	}
	d := at(dir.VirtualAddress, 40) // IMAGE_EXPORT_DIRECTORY
	if len(d) < 40 {
		return nil
	}
	n := min(binary.LittleEndian.Uint32(d[24:]), maxExports)
	names := at(binary.LittleEndian.Uint32(d[32:]), 4*n)
	if uint32(len(names)) < 4*n {
		return nil
	}
	var out []string
	for i := range n {
		b := at(binary.LittleEndian.Uint32(names[4*i:]), 256)
		if end := slices.Index(b, 0); end >= 0 {
			out = append(out, string(b[:end]))
		}
	}
	return out
}

// maxExports bounds the names read from a PE export directory.
const maxExports = 1 << 16

// foreign says how a library is not for this platform ("" where it is,
// or nothing is known): "a linux/arm64 library (ELF, EM_AARCH64), and this
// program is linux/amd64".
func (i libraryInfo) foreign() string {
	// ELF serves every Unix but Apple's.
	sameOS := i.goos == runtime.GOOS || i.format == "ELF" && runtime.GOOS != "windows" && runtime.GOOS != "darwin" && runtime.GOOS != "ios"
	if i.format == "" || sameOS && (i.goarch == runtime.GOARCH || i.goarch == "") {
		return ""
	}
	arch := i.goarch
	if arch == "" {
		arch = "an architecture Go does not know"
	}
	return fmt.Sprintf("built for %s (%s library, %s), and this program is %s/%s", arch, i.format, i.machine, runtime.GOOS, runtime.GOARCH)
}

// entryPoints are the exports that look like an ADBC driver's init:
// AdbcXxxInit, xxx_adbc_init and their kin.
func (i libraryInfo) entryPoints() []string {
	var out []string
	for _, s := range i.exports {
		l := strings.ToLower(s)
		if strings.Contains(l, "adbc") && strings.HasSuffix(l, "init") && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
