import type { LabelEntity } from './label.entity';
import type { LabelWire } from './label.wire';

/** Pure: the `Label` JSON; `url` is the label's own API address (repository or organisation). */
export function toLabelWire(label: LabelEntity, url: string): LabelWire {
  return {
    id: label.id,
    name: label.name,
    exclusive: label.exclusive,
    is_archived: label.archivedUnix > 0,
    color: label.color.replace(/^#/, ''),
    description: label.description,
    url,
  };
}
