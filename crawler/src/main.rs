//! `crawl`: squall's crawler on the command line (`crawl --help` lists its flags; the crate's docs
//! say how it is built).

fn main() {
    squall_crawler::main();
}
