# Homebrew formula for quire (macOS and Linux).
# For a release: set `url` to the tag's tarball and `sha256` to its
# checksum (`brew fetch --build-from-source ./quire.rb` prints it).
class Quire < Formula
  desc "Local-first workbench for page-based text projects"
  homepage "https://github.com/quire-dev/quire"
  url "https://github.com/quire-dev/quire/archive/refs/tags/v0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  license "MIT"
  head "https://github.com/quire-dev/quire.git", branch: "main"

  depends_on "rust" => :build

  def install
    system "cargo", "install", "--profile", "dist", *std_cargo_args
    generate_completions_from_executable(bin/"quire", "completions")
    system bin/"quire", "man", "--out", buildpath/"man"
    man1.install Dir[buildpath/"man/*.1"]
    (pkgshare/"modes").install Dir["modes/*.toml"]
    (pkgshare/"examples").install Dir["config/examples/*.toml"]
  end

  service do
    run [opt_bin/"quire", "--mode", "headless"]
    keep_alive true
    log_path var/"log/quire.log"
    error_log_path var/"log/quire.log"
  end

  test do
    assert_match "quire #{version}", shell_output("#{bin}/quire --version")
    system bin/"quire", "config", "check"
    assert_match "headless", shell_output("#{bin}/quire modes list")
  end
end
