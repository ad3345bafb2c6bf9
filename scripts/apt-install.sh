# Sourced by the install-*.sh scripts: apt_install NAME PACKAGE... installs
# the packages with apt-get (as root, or through sudo), waiting for another
# apt-get to release its lock rather than failing.
apt_install() {
	local name=$1
	shift
	command -v apt-get >/dev/null 2>&1 || { echo "$name: error: $* missing and no apt-get to install them" >&2; exit 1; }
	local sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	echo "$name: installing $*"
	$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >/dev/null
}
