/** `5 MB`, `29.4 MB`: a size as limits and refusals say it, to a tenth. */
export function megabytes(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}
