use qgates::core::config::*;
#[test]
fn show() {
    let cases = [
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing: {strategy: exit_code}\n    bogus: 1\n",
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing: {strategy: nope}\n",
        "version: 1\ngates:\n  a:\n    command: x\n    parsing: {strategy: exit_code}\n",
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<file>[a'\n",
        "version: 1\nactive_gates: [a, b]\ngates:\n  a:\n    command: [x]\n    parsing:\n      strategy: text_violations\n      pattern: '(?P<file>a)'\n      defaults: {message: 'x {nope}'}\n",
        "version: 1\ngates:\n  a:\n    command: [x]\n    parsing:\n      strategy: json_violations\n      violations_path: 'abc'\n      field_map: {message: m}\n",
        "version: 2\ngates: {\n",
        "version: 2\ngates: {}\n",
    ];
    for c in cases {
        match parse_config(c, ConfigSource::File("q.yaml".into())) {
            Ok(_) => eprintln!("OK"),
            Err(e) => eprintln!("{e}\n---"),
        }
    }
    let c = parse_config(DEFAULT_CONFIG, ConfigSource::Embedded).unwrap();
    eprintln!("{}", c.gates.len());
}
