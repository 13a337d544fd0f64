import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** A repository's topic names (GET/PUT /repos/{owner}/{repo}/topics). */
@ApiSchema({ name: 'TopicName' })
export class TopicNameWire {
  @ApiProperty({ type: [String] }) topics: string[];
}

/** One topic of GET /topics/search. */
@ApiSchema({ name: 'TopicResponse' })
export class TopicResponseWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() topic_name: string;
  @ApiProperty({ format: 'int64', description: 'the repositories carrying it that the caller may see' }) repo_count: number;
  @ApiProperty({ format: 'date-time' }) created: string;
  @ApiProperty({ format: 'date-time' }) updated: string;
}

/** GET /topics/search answer: Forgejo wraps the list in `topics`. */
@ApiSchema({ name: 'TopicListResponse' })
export class TopicListWire {
  @ApiProperty({ type: [TopicResponseWire] }) topics: TopicResponseWire[];
}
