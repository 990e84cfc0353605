fn main() {
    println!("leaselab");
}
