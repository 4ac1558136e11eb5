package sandbox

// systemReadOnly is what a program, its providers and the shells of its
// local-exec provisioners read of the system: binaries and libraries, CA
// certificates, name resolution, time zones, the dynamic linker's cache,
// and the user database (ssh and git look themselves up in it; it holds no
// password hashes). Nothing here is the server's.
var systemReadOnly = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/etc/crypto-policies",
	"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/localtime",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
	"/etc/passwd", "/etc/group",
	"/dev/urandom", "/dev/random",
}

// systemReadWrite are the devices a program may write to without harm.
var systemReadWrite = []string{"/dev/null", "/dev/zero", "/dev/full"}
