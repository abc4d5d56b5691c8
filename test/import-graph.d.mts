export declare const SRC: string;
export interface Import {
  specifier: string;
  /** The file imported, relative to src/; undefined for packages and node: builtins. */
  target: string | undefined;
  /** A relative specifier that names no file. */
  missing?: boolean;
}
export declare function sourceFiles(dir?: string): string[];
export declare function importsOf(file: string): Import[];
export declare function areaOf(file: string): string;
export declare function areaGraph(): Map<string, Set<string>>;
/** Files over `maxLines` lines and functions over `maxFunctionLines`, each as `file:line (n lines)`. */
export declare function oversized(maxLines: number, maxFunctionLines: number): string[];
